package cuda

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"holdgo/tensor"
)

// The per-layer convolution table of issue 44 (item 8): every distinct convolution of a network's
// training step, each pass (forward, input gradient, weight gradient) on each path of this device —
// im2col + GEMM (the path before the implicit kernels), the implicit kernels in strict FP32, TF32
// and BF16 — timed with the device's events, median of the repetitions.

// ConvGeom is one convolution's shape: x (N, C, H, W), w (O, C, K, K), stride S, padding P.
type ConvGeom struct{ N, C, H, W, O, K, S, P int }

func (g ConvGeom) String() string {
	return fmt.Sprintf("%d×%d×%d×%d →%d k%d s%d p%d", g.N, g.C, g.H, g.W, g.O, g.K, g.S, g.P)
}

// outSize is the output's spatial size.
func (g ConvGeom) outSize() (oh, ow int) {
	return tensor.ConvOutSize(g.H, g.K, g.S, g.P), tensor.ConvOutSize(g.W, g.K, g.S, g.P)
}

// Flops is one pass's multiply-adds × 2 (the forward's; the input and weight gradients do as many).
func (g ConvGeom) Flops() float64 {
	oh, ow := g.outSize()
	return 2 * float64(g.N) * float64(g.O) * float64(oh*ow) * float64(g.C*g.K*g.K)
}

// ConvPaths are the paths of BenchConvs, in its order.
var ConvPaths = []string{"im2col", "implicit strict", "implicit tf32", "implicit bf16"}

// ConvPasses are the passes of BenchConvs, in its order.
var ConvPasses = []string{"forward", "input grad", "weight grad"}

// ConvTiming is one cell of the table.
type ConvTiming struct {
	Geom    ConvGeom `json:"geom"`
	Count   int      `json:"count"` // convolutions of this shape per training step
	Pass    string   `json:"pass"`
	Path    string   `json:"path"`
	Seconds float64  `json:"seconds"` // median device time of one run
	TFLOPs  float64  `json:"tflops"`  // Geom.Flops() / Seconds / 1e12
}

// BenchConvs times each shape (with its count per step) on dev, reps runs each after a warm-up.
func BenchConvs(dev *Device, shapes []ConvGeom, counts []int, reps int) ([]ConvTiming, error) {
	timer, ok := dev.be.(Timer)
	if !ok {
		return nil, ErrNoTimer
	}
	reps = max(reps, 1)
	old := *dev
	defer func() {
		dev.Im2colConv, dev.StrictFP32, dev.TF32Convs, dev.BF16 = old.Im2colConv, old.StrictFP32, old.TF32Convs, old.BF16
	}()
	rng := tensor.NewRNG(5)
	var out []ConvTiming
	for si, g := range shapes {
		oh, ow := g.outSize()
		x, err := tensor.RandN(rng, g.N, g.C, g.H, g.W).ToDevice(dev)
		if err != nil {
			return nil, err
		}
		w, _ := tensor.RandN(rng, g.O, g.C, g.K, g.K).ToDevice(dev)
		b, _ := tensor.RandN(rng, g.O).ToDevice(dev)
		dy, err := tensor.RandN(rng, g.N, g.O, oh, ow).ToDevice(dev)
		if err != nil {
			return nil, err
		}
		y, dx, dw := tensor.New(dev, g.N, g.O, oh, ow), tensor.New(dev, g.N, g.C, g.H, g.W), tensor.New(dev, g.O, g.C, g.K, g.K)
		passes := []func() error{
			func() error { return tensor.Err(tensor.Conv2d(y, x, w, b, g.S, g.P)) },
			func() error { return tensor.Err(tensor.Conv2dGradInput(dx, dy, w, g.S, g.P, 0)) },
			func() error { return tensor.Err(tensor.Conv2dGradWeight(dw, x, dy, g.S, g.P, 0)) },
		}
		for pi, run := range passes {
			for _, path := range ConvPaths {
				dev.Im2colConv = path == "im2col"
				dev.StrictFP32 = path == "implicit strict"
				dev.TF32Convs = path == "implicit tf32" // the shim's emulation; a GPU's TF32 follows StrictFP32
				dev.BF16 = path == "implicit bf16"
				if err := run(); err != nil {
					return nil, fmt.Errorf("bench conv %v %s %s: %w", g, ConvPasses[pi], path, err)
				}
				times := make([]float64, reps)
				for i := range times {
					if times[i], err = timer.Time(run); err != nil {
						return nil, fmt.Errorf("bench conv %v %s %s: %w", g, ConvPasses[pi], path, err)
					}
				}
				slices.Sort(times)
				t := times[len(times)/2]
				out = append(out, ConvTiming{Geom: g, Count: counts[si], Pass: ConvPasses[pi], Path: path, Seconds: t, TFLOPs: g.Flops() / t / 1e12})
			}
		}
	}
	return out, nil
}

// WriteConvTable prints BenchConvs' cells, one row per shape and pass, one column per path, and the
// step's total per path (each shape's time × its count); peakTF32 (TFLOP/s, 0 if unknown) adds the
// TF32 column's fraction of the tensor cores' dense TF32 peak and the BF16 column's of the dense
// BF16 peak, twice TF32's on an A100, H100 or H200.
func WriteConvTable(w io.Writer, cells []ConvTiming, peakTF32 float64) {
	fmt.Fprintf(w, "%-34s %-11s %5s", "convolution", "pass", "count")
	for _, p := range ConvPaths {
		fmt.Fprintf(w, " %20s", p+" µs (TFLOP/s)")
	}
	tf, bf := slices.Index(ConvPaths, "implicit tf32"), slices.Index(ConvPaths, "implicit bf16")
	if peakTF32 > 0 {
		fmt.Fprintf(w, " %8s %8s", "% TF32", "% BF16")
	}
	fmt.Fprintln(w)
	total := map[string]float64{}
	for i := 0; i+len(ConvPaths) <= len(cells); i += len(ConvPaths) {
		c := cells[i]
		fmt.Fprintf(w, "%-34s %-11s %5d", c.Geom, c.Pass, c.Count)
		for _, d := range cells[i : i+len(ConvPaths)] {
			fmt.Fprintf(w, " %20s", fmt.Sprintf("%.1f (%.1f)", d.Seconds*1e6, d.TFLOPs))
			total[d.Path] += d.Seconds * float64(d.Count)
		}
		if peakTF32 > 0 {
			fmt.Fprintf(w, " %8.1f %8.1f", 100*cells[i+tf].TFLOPs/peakTF32, 100*cells[i+bf].TFLOPs/(2*peakTF32))
		}
		fmt.Fprintln(w)
	}
	var parts []string
	for _, p := range ConvPaths {
		parts = append(parts, fmt.Sprintf("%s %.2f ms", p, total[p]*1e3))
	}
	fmt.Fprintf(w, "per training step (time × count, all three passes): %s\n", strings.Join(parts, ", "))
}
