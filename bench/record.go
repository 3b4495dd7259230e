package bench

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"

	"holdgo/cuda"
	"holdgo/tensor"
	"holdgo/train"
)

// bench train on the recording device (--device record, cuda.NewRecordingDevice): the real training
// step issued to a backend that runs nothing and records every launch, GEMM, memset, copy and host
// synchronisation, so the step's cost on a GPU can be sized without one (docs/gpu.md, "Sizing a
// step without a GPU").

// recorder returns the recording backend under dev, or nil.
func recorder(dev tensor.Device) *cuda.Record {
	if cd, ok := dev.(*cuda.Device); ok {
		if r, ok := cd.Backend().(*cuda.Record); ok {
			return r
		}
	}
	return nil
}

// record runs steps non-logging steps and one logging step of tr (warm already) on the recording
// device dev and stores their counts in res.
func record(res *TrainBench, tr *train.Trainer, rec *cuda.Record, dev *cuda.Device, steps int) error {
	res.Recorded, res.Steady, res.Precision = true, true, dev.Precision()
	start := time.Now()
	first := rec.Stats()
	var one cuda.RecordStats
	for i := range steps {
		before := rec.Stats()
		if _, err := tr.Advance(false); err != nil {
			return err
		}
		s := rec.Stats().Sub(before)
		if i == 0 {
			one = s
		} else if !sameCounts(s, one) {
			res.Steady = false
		}
	}
	res.StepSeconds = time.Since(start).Seconds() / float64(steps)
	res.RecordStep = rec.Stats().Sub(first).Div(steps)
	before := rec.Stats()
	if _, err := tr.Advance(true); err != nil {
		return err
	}
	res.RecordLog = rec.Stats().Sub(before)
	return nil
}

// sameCounts reports whether two steps recorded the same totals.
func sameCounts(a, b cuda.RecordStats) bool {
	return a.Launches == b.Launches && a.GemmCalls == b.GemmCalls && a.GemmFLOPs == b.GemmFLOPs && a.KernelBytes == b.KernelBytes &&
		a.HostSyncs == b.HostSyncs && a.Memsets == b.Memsets && a.MemsetBytes == b.MemsetBytes && a.DtoDBytes == b.DtoDBytes
}

// TrainJSON is holdctl bench train --json's object. On the recording device step and logging_step
// hold the recorded counts (cuda.RecordStats: launches, gemm_calls, host_syncs, memsets,
// kernel_bytes, gemm_flops, …, by kernel family) and host_seconds_per_step the host's time to issue
// a step; on a CUDA device counters holds the counting backend's per-step counts.
type TrainJSON struct {
	Device      string            `json:"device"`
	Model       string            `json:"model"`
	Params      int               `json:"params"`
	Batch       int               `json:"batch"`
	TimedSteps  int               `json:"timed_steps"`
	StepSeconds float64           `json:"step_seconds,omitempty"`
	SamplesPerS float64           `json:"samples_per_s,omitempty"`
	Counters    *cuda.Counters    `json:"counters,omitempty"`
	Precision   string            `json:"precision,omitempty"`
	Steady      *bool             `json:"steady,omitempty"`
	HostSeconds float64           `json:"host_seconds_per_step,omitempty"`
	Step        *cuda.RecordStats `json:"step,omitempty"`
	LoggingStep *cuda.RecordStats `json:"logging_step,omitempty"`
	// Profile is --profile's step by kernel name (cuda.ProfileEntry).
	Profile map[string]cuda.ProfileEntry `json:"profile,omitempty"`
}

// JSON returns r as holdctl bench train --json prints it.
func (r *TrainBench) JSON(steps int) TrainJSON {
	j := TrainJSON{Device: r.Device, Model: r.Model, Params: r.Params, Batch: r.Batch, TimedSteps: steps}
	switch {
	case r.Recorded:
		j.Precision = r.Precision
		j.Steady, j.HostSeconds = &r.Steady, r.StepSeconds
		j.Step, j.LoggingStep = &r.RecordStep, &r.RecordLog
	default:
		j.StepSeconds, j.SamplesPerS = r.StepSeconds, float64(r.Batch)/r.StepSeconds
		if r.Counted {
			j.Counters = &r.Step
		}
		j.Profile = r.Profile
	}
	return j
}

// WriteRecord prints what the recording device counted: the per-step totals and the table by
// kernel family.
func WriteRecord(w io.Writer, r *TrainBench, steps int) {
	s := r.RecordStep
	prec := map[string]string{"tf32": "TF32", "bf16": "BF16", "strict": "strict FP32"}[r.Precision]
	fmt.Fprintf(w, "bench train: %s, %d parameters, batch %d, device record (nothing runs: the launch stream a GPU would get, %s GEMMs), %d steps after a warm-up step\n",
		r.Model, r.Params, r.Batch, prec, steps)
	if !r.Steady {
		fmt.Fprintf(w, "  the timed steps recorded different counts: the figures below are their mean\n")
	}
	fmt.Fprintf(w, "  per non-logging step: %d own kernel launches + %d GEMM calls = %d\n", s.Launches, s.GemmCalls, s.Launches+s.GemmCalls)
	fmt.Fprintf(w, "    own-kernel traffic %s (cuda/bytemodel.go); GEMM %s, operands %s; D→D copies %d (%s read and written)\n",
		size(s.KernelBytes), flop(s.GemmFLOPs), size(s.GemmBytes), s.DtoD, size(2*s.DtoDBytes))
	fmt.Fprintf(w, "    memsets %d (%s):%s\n", s.Memsets, size(s.MemsetBytes), sources(s.MemsetSources))
	fmt.Fprintf(w, "    host synchronisations %d:%s\n", s.HostSyncs, sources(s.HostSyncSources))
	if len(s.Unmodelled) > 0 {
		fmt.Fprintf(w, "    KERNELS WITHOUT A BYTE MODEL (their bytes are missing):%s\n", sources(s.Unmodelled))
	}
	unit, scale := "GB", 1e9
	if s.KernelBytes < 1e9 {
		unit, scale = "MB", 1e6
	}
	fmt.Fprintf(w, "  %-14s %9s %10s %7s\n", "family", "launches", unit, "share")
	for _, f := range byBytes(s.Families) {
		fmt.Fprintf(w, "  %-14s %9d %10.2f %6.1f%%\n", f.name, f.Launches, float64(f.Bytes)/scale, 100*float64(f.Bytes)/float64(max(s.KernelBytes, 1)))
	}
	l := r.RecordLog
	fmt.Fprintf(w, "  logging step: %d own launches + %d GEMM calls, %d host synchronisations:%s\n", l.Launches, l.GemmCalls, l.HostSyncs,
		sources(l.HostSyncSources))
	fmt.Fprintf(w, "  host time to issue a step: %.1f ms (no device work)\n", 1e3*r.StepSeconds)
}

// flop prints a FLOP count in TFLOP, GFLOP or MFLOP.
func flop(f int64) string {
	switch {
	case f >= 1e12:
		return fmt.Sprintf("%.2f TFLOP", float64(f)/1e12)
	case f >= 1e9:
		return fmt.Sprintf("%.2f GFLOP", float64(f)/1e9)
	}
	return fmt.Sprintf("%.2f MFLOP", float64(f)/1e6)
}

// size prints a byte count in GB, MB or kB.
func size(b int64) string {
	switch {
	case b >= 1e9:
		return fmt.Sprintf("%.2f GB", float64(b)/1e9)
	case b >= 1e6:
		return fmt.Sprintf("%.2f MB", float64(b)/1e6)
	}
	return fmt.Sprintf("%.1f kB", float64(b)/1e3)
}

// sources lists a count map, largest first.
func sources(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	out := ""
	for _, k := range keys {
		out += fmt.Sprintf(" %d %s;", m[k], k)
	}
	if out == "" {
		return " none"
	}
	return out[:len(out)-1]
}

type namedUsage struct {
	name string
	cuda.Usage
}

// byBytes orders families by bytes, then launches, then name.
func byBytes(m map[string]cuda.Usage) []namedUsage {
	var l []namedUsage
	for k, v := range m {
		l = append(l, namedUsage{k, v})
	}
	slices.SortFunc(l, func(a, b namedUsage) int {
		return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), cmp.Compare(b.Launches, a.Launches), cmp.Compare(a.name, b.name))
	})
	return l
}
