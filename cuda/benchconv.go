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
		passes, err := convPassRunners(dev, g, rng)
		if err != nil {
			return nil, err
		}
		for pi, run := range passes {
			for _, path := range ConvPaths {
				dev.Im2colConv = path == "im2col"
				dev.StrictFP32 = path == "implicit strict"
				dev.TF32Convs = path == "implicit tf32" // the shim's emulation; a GPU's TF32 follows StrictFP32
				dev.BF16 = path == "implicit bf16"
				t, err := medianTime(timer, run, reps)
				if err != nil {
					return nil, fmt.Errorf("bench conv %v %s %s: %w", g, ConvPasses[pi], path, err)
				}
				out = append(out, ConvTiming{Geom: g, Count: counts[si], Pass: ConvPasses[pi], Path: path, Seconds: t, TFLOPs: g.Flops() / t / 1e12})
			}
		}
	}
	return out, nil
}

// convPassRunners returns the three passes of convolution g (forward with a bias, input gradient,
// weight gradient) on dev, on random operands it allocates there.
func convPassRunners(dev *Device, g ConvGeom, rng *tensor.RNG) ([]func() error, error) {
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
	return []func() error{
		func() error { return tensor.Err(tensor.Conv2d(y, x, w, b, g.S, g.P)) },
		func() error { return tensor.Err(tensor.Conv2dGradInput(dx, dy, w, g.S, g.P, 0)) },
		func() error { return tensor.Err(tensor.Conv2dGradWeight(dw, x, dy, g.S, g.P, 0)) },
	}, nil
}

// medianTime runs run once (warm-up: plans, opt-ins, the JIT) and returns the median device time of
// reps more runs.
func medianTime(timer Timer, run func() error, reps int) (float64, error) {
	if err := run(); err != nil {
		return 0, err
	}
	times := make([]float64, max(reps, 1))
	for i := range times {
		var err error
		if times[i], err = timer.Time(run); err != nil {
			return 0, err
		}
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}

// TileTiming is one convolution pass at one tensor-core precision timed at both tiles.
type TileTiming struct {
	Geom             ConvGeom `json:"geom"`
	Count            int      `json:"count"`
	Pass             string   `json:"pass"`
	Precision        string   `json:"precision"`
	Seconds64        float64  `json:"seconds_64"`
	Seconds128       float64  `json:"seconds_128"` // 0 where the 128 tile could not run (Device.OptInErr)
	Rule, Chosen     int      `json:"-"`           // the shape rule's tile, the faster one
	RuleS, ChosenSec float64  `json:"-"`
}

// TuneConvTiles times every pass of each shape at both tiles in TF32 and BF16 on dev (reps runs,
// the median) and returns the table of the faster tiles for dev's GPU and this build (a tie keeps
// 64) and the timings with the shape rule's choice beside the table's.
func TuneConvTiles(dev *Device, shapes []ConvGeom, counts []int, reps int) (ConvTileTable, []TileTiming, error) {
	timer, ok := dev.be.(Timer)
	if !ok {
		return ConvTileTable{}, nil, ErrNoTimer
	}
	gpu := dev.name
	if n, ok := dev.be.(interface{ DeviceName() string }); ok {
		gpu = n.DeviceName()
	}
	table := ConvTileTable{GPU: gpu, Kernels: ConvKernelsHash(), Tiles: map[string]int{}}
	old := *dev
	defer func() {
		dev.Im2colConv, dev.StrictFP32, dev.TF32Convs, dev.BF16, dev.ConvTile, dev.Tiles = old.Im2colConv, old.StrictFP32, old.TF32Convs,
			old.BF16, old.ConvTile, old.Tiles
	}()
	dev.Im2colConv, dev.StrictFP32, dev.TF32Convs, dev.Tiles = false, false, true, nil
	rng := tensor.NewRNG(5)
	var out []TileTiming
	for si, g := range shapes {
		passes, err := convPassRunners(dev, g, rng)
		if err != nil {
			return table, nil, err
		}
		for pi, run := range passes {
			for _, prec := range []int{convTF32, convBF16} {
				dev.BF16 = prec == convBF16
				dev.ConvTile = 0
				rule := dev.convPlan(dev.convShape([]int{g.N, g.C, g.H, g.W}, []int{g.O, g.C, g.K, g.K}, outShape(g),
					tensor.Op{Stride: g.S, Pad: g.P}), pi).tile
				tt := TileTiming{Geom: g, Count: counts[si], Pass: ConvPasses[pi], Precision: precName(prec), Rule: rule, Chosen: 64}
				for _, tile := range []int{64, 128} {
					dev.ConvTile = tile
					if dev.convPlan(dev.convShape([]int{g.N, g.C, g.H, g.W}, []int{g.O, g.C, g.K, g.K}, outShape(g),
						tensor.Op{Stride: g.S, Pad: g.P}), pi).tile != tile {
						continue // the 128 tile's shared memory was refused
					}
					t, err := medianTime(timer, run, reps)
					if err != nil {
						return table, nil, fmt.Errorf("bench conv --tiles %v %s %s tile %d: %w", g, ConvPasses[pi], precName(prec), tile, err)
					}
					if tile == 64 {
						tt.Seconds64 = t
					} else {
						tt.Seconds128 = t
					}
				}
				tt.ChosenSec, tt.RuleS = tt.Seconds64, tt.Seconds64
				if tt.Seconds128 > 0 && tt.Seconds128 < tt.Seconds64 {
					tt.Chosen, tt.ChosenSec = 128, tt.Seconds128
				}
				if rule == 128 && tt.Seconds128 > 0 {
					tt.RuleS = tt.Seconds128
				}
				table.Tiles[ConvTileKey(g, pi, tt.Precision)] = tt.Chosen
				out = append(out, tt)
			}
		}
	}
	return table, out, nil
}

// outShape is the output shape of g.
func outShape(g ConvGeom) []int {
	oh, ow := g.outSize()
	return []int{g.N, g.O, oh, ow}
}

// WriteTileSummary prints TuneConvTiles' timings: per pass and precision both tiles' µs, the
// table's choice and the rule's, and per precision the step's convolution time under each.
func WriteTileSummary(w io.Writer, tt []TileTiming) {
	fmt.Fprintf(w, "%-34s %-11s %-5s %12s %12s %6s %6s\n", "convolution", "pass", "prec", "64 µs", "128 µs", "table", "rule")
	total := map[string][2]float64{}
	changed := 0
	for _, t := range tt {
		fmt.Fprintf(w, "%-34s %-11s %-5s %12.1f %12.1f %6d %6d\n", t.Geom, t.Pass, t.Precision, 1e6*t.Seconds64, 1e6*t.Seconds128, t.Chosen, t.Rule)
		v := total[t.Precision]
		total[t.Precision] = [2]float64{v[0] + t.ChosenSec*float64(t.Count), v[1] + t.RuleS*float64(t.Count)}
		if t.Chosen != t.Rule {
			changed++
		}
	}
	for _, p := range []string{"tf32", "bf16"} {
		fmt.Fprintf(w, "per training step, %s: %.2f ms with the table, %.2f ms with the shape rule\n", p, 1e3*total[p][0], 1e3*total[p][1])
	}
	fmt.Fprintf(w, "the table differs from the shape rule in %d of %d choices\n", changed, len(tt))
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
