package optest

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"holdgo/tensor"
)

// The performance mode: every case of the table timed on a device, with the rate of its arithmetic
// (tensor.FLOPs) and of its memory traffic (every operand read once and the result written once).

// PerfResult is one case's speed on a device.
type PerfResult struct {
	Case
	Seconds float64 // median time of one dispatch of the case's op
	FLOPs   int64   // tensor.FLOPs of that dispatch
	Bytes   int64   // its operands' and result's bytes
	GFLOPS  float64 // FLOPs / Seconds / 1e9 (0 for data movement)
	GBps    float64 // Bytes / Seconds / 1e9
	Err     error   // the device's error (errors.Is(Err, tensor.ErrUnsupported) for a missing kernel)
}

// perfRounds is the number of timed rounds whose median Perf reports.
const perfRounds = 5

// Perf runs c on dev once to record the dispatch of its op (the largest one of c.Kind where the
// case runs several), then times that dispatch alone, device.Exec on the same operands, in
// perfRounds rounds of enough repetitions to last about minTime/perfRounds each, each round ended
// by reading the result back (which waits for an asynchronous device). Operand construction and
// moves are not timed.
func Perf(dev tensor.Device, c Case, minTime time.Duration) PerfResult {
	res := PerfResult{Case: c}
	type dispatch struct {
		op  tensor.Op
		out *tensor.Tensor
		in  []*tensor.Tensor
		w   int64
	}
	var best *dispatch
	stop := tensor.ObserveExec(func(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor) {
		if op.Kind != c.Kind || out == nil || out.Device() != dev {
			return
		}
		d := &dispatch{op: op, out: out, in: slices.Clone(in), w: tensor.FLOPs(op, out, in...) + int64(out.Len())}
		if best == nil || d.w > best.w {
			best = d
		}
	})
	_, err := runOn(dev, c)
	stop()
	if err != nil {
		res.Err = err
		return res
	}
	if best == nil {
		res.Err = fmt.Errorf("the case dispatched no %v on %s", c.Kind, dev.Name())
		return res
	}
	res.FLOPs = tensor.FLOPs(best.op, best.out, best.in...)
	res.Bytes = 4 * int64(best.out.Len())
	for _, t := range best.in {
		if t != nil {
			res.Bytes += 4 * int64(t.Len())
		}
	}
	run := func(n int) (time.Duration, error) {
		start := time.Now()
		for range n {
			if err := dev.Exec(best.op, best.out, best.in...); err != nil {
				return 0, err
			}
		}
		if _, err := best.out.ToHost(); err != nil {
			return 0, err
		}
		return time.Since(start), nil
	}
	// Repetitions per round: double from 1 until a round lasts minTime/perfRounds.
	n, target := 1, minTime/perfRounds
	for {
		d, err := run(n)
		if err != nil {
			res.Err = err
			return res
		}
		if d >= target || n >= 1<<24 {
			break
		}
		n *= 2
	}
	times := make([]float64, perfRounds)
	for i := range times {
		d, err := run(n)
		if err != nil {
			res.Err = err
			return res
		}
		times[i] = d.Seconds() / float64(n)
	}
	slices.Sort(times)
	res.Seconds = times[perfRounds/2]
	if res.Seconds > 0 {
		res.GFLOPS = float64(res.FLOPs) / res.Seconds / 1e9
		res.GBps = float64(res.Bytes) / res.Seconds / 1e9
	}
	return res
}

// PerfTable times every case whose name contains filter ("" for all) on dev.
func PerfTable(dev tensor.Device, filter string, minTime time.Duration) []PerfResult {
	var out []PerfResult
	for _, c := range Cases() {
		if strings.Contains(c.Name, filter) {
			out = append(out, Perf(dev, c, minTime))
		}
	}
	return out
}

// WritePerf prints a PerfTable as Markdown: per case the time of one dispatch, GFLOP/s and GB/s.
func WritePerf(w io.Writer, device string, rows []PerfResult) {
	fmt.Fprintf(w, "| op | case | %s µs | GFLOP/s | GB/s |\n|---|---|---|---|---|\n", device)
	for _, r := range rows {
		if r.Err != nil {
			fmt.Fprintf(w, "| %v | %s | %s | | |\n", r.Kind, r.Name, strings.ReplaceAll(r.Err.Error(), "|", "/"))
			continue
		}
		fmt.Fprintf(w, "| %v | %s | %.3g | %.3g | %.3g |\n", r.Kind, r.Name, r.Seconds*1e6, r.GFLOPS, r.GBps)
	}
}
