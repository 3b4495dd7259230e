package bench

import (
	"fmt"
	"io"
	"slices"
	"time"

	"holdgo/autograd"
	"holdgo/internal/budget"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// SampleConfig is one `holdctl bench sample` run: a trained checkpoint sampled
// with one sampler, next to its network's plain forward pass at the same batch.
type SampleConfig struct {
	Ckpt    string      // run directory or checkpoint file
	Spec    sample.Spec // sampler, NFE, grid
	Batch   int         // images sampled, all in one forward pass per evaluation
	Seed    uint64
	Repeats int // forward passes timed (median); the sampling run is timed once
}

// SampleResult compares sampling with the forward pass it is made of.
type SampleResult struct {
	Model        string  `json:"model"`
	Sampler      string  `json:"sampler"`
	Batch        int     `json:"batch"`
	NFE          int     `json:"nfe"`
	Seconds      float64 `json:"seconds"` // the whole sampling run (prior draw, steps, read-out)
	ImagesPerSec float64 `json:"images_per_s"`
	// MsPerEval is the sampling run's time per network evaluation per image;
	// ForwardMsPerImage the median time per image of the network's forward pass
	// alone (no tape, same batch, random states and times), as bench ncsnpp
	// times it. Overhead = MsPerEval/ForwardMsPerImage − 1 is what the
	// sampler adds per evaluation: its steps, the float64 ↔ float32 copies.
	MsPerEval         float64 `json:"ms_per_eval_image"`
	ForwardMsPerImage float64 `json:"forward_ms_per_image"`
	Overhead          float64 `json:"overhead"`
}

// Sample times cfg.Batch images of the checkpoint with cfg.Spec (one worker, so
// that every network evaluation is one forward pass of cfg.Batch images on the
// kernels' own threads), then the network's forward pass at the same batch.
func Sample(cfg SampleConfig) (*SampleResult, error) {
	if cfg.Batch < 1 || cfg.Repeats < 1 {
		return nil, fmt.Errorf("bench sample: batch %d and repeats %d must be at least 1", cfg.Batch, cfg.Repeats)
	}
	m, err := train.LoadModel(cfg.Ckpt, false, "")
	if err != nil {
		return nil, &InputError{err}
	}
	ns, ok := m.Score.(*train.NetworkScorer)
	if !ok {
		return nil, &InputError{fmt.Errorf("bench sample: %s does not hold a score network", cfg.Ckpt)}
	}
	// A forward pass of a few samples tells the memory a pass of the whole batch holds: refuse a batch
	// beyond the memory budget (--max-memory) before the pass that would take it.
	probe := min(cfg.Batch, train.ProbeBatch)
	_, perSample, err := forwardMs(ns, probe, 1, cfg.Seed)
	if err != nil {
		return nil, err
	}
	if err := budget.CheckCount(int64(cfg.Batch), perSample, "--batch (forward activations per image)"); err != nil {
		return nil, &InputError{err}
	}
	ns.ForwardBatch = cfg.Batch
	s, err := cfg.Spec.Build(m.SDE, ns, m.Source.Dimension())
	if err != nil {
		return nil, &InputError{err}
	}
	s.Workers = 1
	start := time.Now()
	res, err := s.Sample(cfg.Batch, cfg.Seed)
	if err != nil {
		return nil, err
	}
	secs := time.Since(start).Seconds()
	fwd, _, err := forwardMs(ns, cfg.Batch, cfg.Repeats, cfg.Seed)
	if err != nil {
		return nil, err
	}
	r := &SampleResult{Model: m.Config.Model, Sampler: cfg.Spec.Method, Batch: cfg.Batch, NFE: res.NFE, Seconds: secs,
		ImagesPerSec: float64(cfg.Batch) / secs, ForwardMsPerImage: fwd}
	if res.NFE > 0 {
		r.MsPerEval = secs / float64(res.NFE*cfg.Batch) * 1e3
		r.Overhead = r.MsPerEval/fwd - 1
	}
	return r, nil
}

// forwardMs is the median time per image (ms) of the scorer's network forward
// pass on batch random states at random times in (0.01·T, T], after one warm-up,
// and the tensor memory the pass holds per image (bytes).
func forwardMs(ns *train.NetworkScorer, batch, repeats int, seed uint64) (ms float64, bytesPerImage int64, err error) {
	state, _ := ns.Net.Widths()
	r := rng.New(seed + 1)
	x := tensor.RandN(r, batch, state)
	ts := tensor.RandU(r, 0.01*ns.SDE.Horizon(), ns.SDE.Horizon(), batch)
	g := autograd.NewTape(tensor.CPU)
	g.SetNoGrad(true)
	pass := func() error {
		g.Reset()
		return ns.Net.ScoreForward(g, g.Const(x), g.Const(ts)).T.Err()
	}
	if err := pass(); err != nil {
		return 0, 0, err
	}
	bytesPerImage = max(1, g.MemBytes()/int64(batch))
	times := make([]float64, 0, repeats)
	for range repeats {
		start := time.Now()
		if err := pass(); err != nil {
			return 0, 0, err
		}
		times = append(times, time.Since(start).Seconds())
	}
	slices.Sort(times)
	return times[len(times)/2] / float64(batch) * 1e3, bytesPerImage, nil
}

// WriteSample prints a SampleResult.
func WriteSample(w io.Writer, r *SampleResult) {
	fmt.Fprintf(w, "%s, %s at NFE %d, %d images in one batch: %.2f s, %.2f images/s\n", r.Model, r.Sampler, r.NFE, r.Batch, r.Seconds, r.ImagesPerSec)
	fmt.Fprintf(w, "per network evaluation per image: sampling %.3f ms, forward pass alone %.3f ms (median); the sampler adds %+.1f %%\n",
		r.MsPerEval, r.ForwardMsPerImage, 100*r.Overhead)
}
