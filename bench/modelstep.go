package bench

import (
	"runtime"
	"runtime/debug"
	"time"

	"holdgo/autograd"
	"holdgo/internal/isa"
	"holdgo/internal/parallel"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// StepMemory is what ModelStep measured of one NCSN++ training step (holdctl model info --batch);
// the JSON keys are those of model info.
type StepMemory struct {
	Batch      int     `json:"batch,omitempty"`
	Recycle    bool    `json:"recycle,omitempty"`                // the backward sweep recycled storage (autograd.RecycleOn)
	ForwardMiB float64 `json:"forward_activation_mib,omitempty"` // tensors the tape holds after the forward pass
	PeakMiB    float64 `json:"peak_tensor_mib,omitempty"`        // the tape's tensor memory at its peak: forward + backward
	StepMiB    float64 `json:"step_alloc_mib,omitempty"`         // all Go memory the step allocated (tensors, scratch, closures)
	ForwardMs  float64 `json:"forward_ms,omitempty"`
	StepMs     float64 `json:"step_ms,omitempty"`
	// The FLOPs of the forward pass and of the whole step, counted by the op list (CountFLOPs),
	// their rates over this cold step's times, and those rates as percentages of the FMA peak
	// of the kernels' level (ISA) on the worker pool's threads (PeakGFLOPS).
	ForwardGFLOP  float64 `json:"forward_gflop,omitempty"`
	StepGFLOP     float64 `json:"step_gflop,omitempty"`
	ForwardGFLOPS float64 `json:"forward_gflops,omitempty"`
	StepGFLOPS    float64 `json:"step_gflops,omitempty"`
	PeakGFLOPS    float64 `json:"peak_gflops,omitempty"`
	ForwardPct    float64 `json:"forward_peak_pct,omitempty"`
	StepPct       float64 `json:"step_peak_pct,omitempty"`
	ISA           string  `json:"isa,omitempty"`
	Threads       int     `json:"threads,omitempty"`
}

// ModelStep runs one cold forward and backward pass (dropout on) and
// records the tensor memory of the tape's pool (parameters and their
// gradients excluded): a pool never gives memory back, so what it owns after
// the forward pass holds the activations and what it owns at the end is the
// step's peak; a warm step reuses it and allocates nothing. Go's count of
// all bytes allocated (scratch buffers and closures too) is reported beside it,
// and the step's FLOPs, counted by the op list, with their rate against the
// FMA peak.
func ModelStep(cfg layers.NCSNppConfig, batch int, recycle bool) (*StepMemory, error) {
	r := &StepMemory{}
	m, err := layers.NewNCSNpp(cfg, rng.New(1))
	if err != nil {
		return nil, err
	}
	m.SetDropout(&rng.Stream{Key: 3})
	src := rng.New(2)
	x := tensor.RandN(src, batch, cfg.InChannels, cfg.ImageSize, cfg.ImageSize)
	ts := tensor.RandU(src, 0.01, 1, batch).Data()
	prev := debug.SetGCPercent(-1)
	defer debug.SetGCPercent(prev)
	var before, mid, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	g := autograd.NewTape(tensor.CPU)
	if !recycle {
		g.SetRecycle(autograd.RecycleOff)
	}
	start := time.Now()
	var out *autograd.Value
	fwdFLOPs := CountFLOPs(func() { out = m.Forward(g, g.Const(x), ts) })
	fwd := time.Since(start)
	runtime.ReadMemStats(&mid)
	fwdBytes := g.MemBytes()
	bwdFLOPs := CountFLOPs(func() { g.Backward(g.Mean(g.Square(out))) })
	step := time.Since(start)
	runtime.ReadMemStats(&after)
	const mib = 1 << 20
	r.Batch = batch
	r.Recycle = recycle
	r.ForwardMiB = float64(fwdBytes) / mib
	r.PeakMiB = float64(g.MemBytes()) / mib
	r.StepMiB = float64(after.TotalAlloc-before.TotalAlloc) / mib
	r.ForwardMs, r.StepMs = float64(fwd.Microseconds())/1e3, float64(step.Microseconds())/1e3
	r.ForwardGFLOP, r.StepGFLOP = float64(fwdFLOPs)/1e9, float64(fwdFLOPs+bwdFLOPs)/1e9
	r.ForwardGFLOPS, r.StepGFLOPS = GFLOPS(fwdFLOPs, fwd), GFLOPS(fwdFLOPs+bwdFLOPs, step)
	r.ISA, r.Threads = isa.Level(), parallel.Threads()
	if r.PeakGFLOPS, r.StepPct, err = ofPeak(r.StepGFLOPS, r.ISA); err != nil {
		return nil, err
	}
	r.ForwardPct = Percent(r.ForwardGFLOPS, r.PeakGFLOPS)
	return r, nil
}
