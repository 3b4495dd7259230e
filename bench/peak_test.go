package bench

import (
	"math"
	"runtime"
	"slices"
	"testing"
	"time"

	"holdgo/internal/isa"
	"holdgo/tensor"
	"holdgo/train"
)

// MeasurePeak reports every level this machine supports, best first, with
// positive finite rates on one and two threads and a positive triad
// bandwidth. No timed assertion: the machine may be shared.
func TestMeasurePeak(t *testing.T) {
	r, err := MeasurePeak(PeakConfig{Threads: 2, Duration: 10 * time.Millisecond, TriadN: 1 << 12, Repeats: 1})
	if err != nil {
		t.Fatal(err)
	}
	var levels []string
	for _, l := range r.Levels {
		levels = append(levels, l.ISA)
		for _, g := range []float64{l.One, l.Many, l.PerCore} {
			if !(g > 0) || math.IsInf(g, 0) {
				t.Errorf("%s: %+v, want positive finite GFLOP/s", l.ISA, l)
			}
		}
	}
	if !slices.Equal(levels, isa.Levels()) {
		t.Errorf("levels %v, want %v", levels, isa.Levels())
	}
	if r.Active != isa.Level() || r.Threads != 2 {
		t.Errorf("active %s on %d threads, want %s on 2", r.Active, r.Threads, isa.Level())
	}
	for _, g := range []float64{r.TriadOne, r.TriadAll} {
		if !(g > 0) || math.IsInf(g, 0) {
			t.Errorf("triad %v GB/s", g)
		}
	}
	// What MeasurePeak measured is what PeakGFLOPS answers, without measuring again.
	g, err := PeakGFLOPS(r.Levels[0].ISA, 1)
	if err != nil || g != r.Levels[0].One {
		t.Errorf("PeakGFLOPS(%s, 1) = %v, %v; want the measured %v", r.Levels[0].ISA, g, err, r.Levels[0].One)
	}
}

// PeakGFLOPS measures once per level and thread count and remembers; an
// unknown level is an error.
func TestPeakGFLOPSCached(t *testing.T) {
	a, err := PeakGFLOPS(isa.Generic, 3)
	if err != nil || !(a > 0) || math.IsInf(a, 0) {
		t.Fatalf("PeakGFLOPS(generic, 3) = %v, %v", a, err)
	}
	b, _ := PeakGFLOPS(isa.Generic, 3)
	if a != b {
		t.Errorf("second call measured again: %v then %v", a, b)
	}
	if _, err := PeakGFLOPS("sse9", 1); err == nil {
		t.Error("an unknown level has a peak")
	}
}

// CountFLOPs adds tensor.FLOPs over the ops a function dispatches: the
// convolution of the hand count (N=2, C=3, O=4, 5×5, 3×3, pad 1: 10,800),
// a matmul (2·3·5·7 = 210) and an element-wise add (30).
func TestCountFLOPs(t *testing.T) {
	x, w := tensor.Zeros(2, 3, 5, 5), tensor.Zeros(4, 3, 3, 3)
	got := CountFLOPs(func() {
		tensor.Conv2d(nil, x, w, nil, 1, 1)
		tensor.MatMul(nil, tensor.Zeros(3, 7), tensor.Zeros(7, 5), false, false)
		tensor.Add(nil, tensor.Zeros(6, 5), tensor.Zeros(6, 5))
	})
	if got != 10_800+210+30 {
		t.Fatalf("%d FLOPs, want 11,040", got)
	}
	if got := CountFLOPs(func() {}); got != 0 {
		t.Fatalf("an empty function: %d FLOPs", got)
	}
}

// The toy MLP's matmuls, counted from the op list, are the hand count of
// train.ToyStep (three products of 2·MACs per sample: forward, input
// gradient, weight gradient) less the input gradient of the first layer,
// which the step does not need (its input is a constant): 2·batch·7·hidden
// (6 state dimensions and the time). MLP's count includes them.
func TestMLPFLOPs(t *testing.T) {
	const batch, hidden = 8, 16
	step, perSample, err := train.ToyStep(batch, hidden, 1)
	if err != nil {
		t.Fatal(err)
	}
	var matmul int64
	stop := tensor.ObserveExec(func(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor) {
		if op.Kind == tensor.OpMatMul {
			matmul += tensor.FLOPs(op, out, in...)
		}
	})
	step()
	stop()
	if want := int64(perSample)*batch - 2*batch*7*hidden; matmul != want {
		t.Errorf("matmul FLOPs %d, want %d", matmul, want)
	}
	res, err := MLP(batch, hidden, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.FLOPs <= matmul || res.Time <= 0 {
		t.Fatalf("%+v: want more FLOPs than the matmuls' %d and a positive time", res, matmul)
	}
}

func TestPercent(t *testing.T) {
	for _, tc := range []struct{ part, whole, want float64 }{{50, 200, 25}, {300, 200, 150}, {1, 0, 0}, {1, math.NaN(), 0}} {
		if got := Percent(tc.part, tc.whole); got != tc.want {
			t.Errorf("Percent(%v, %v) = %v, want %v", tc.part, tc.whole, got, tc.want)
		}
	}
	if got := GFLOPS(3e9, 2*time.Second); got != 1.5 {
		t.Errorf("GFLOPS(3e9, 2 s) = %v", got)
	}
}

// MeasurePeak's many-thread column is all cores when Threads is 0.
func TestMeasurePeakAllCores(t *testing.T) {
	r, err := MeasurePeak(PeakConfig{Duration: time.Millisecond, TriadN: 1 << 10, Repeats: 1})
	if err != nil || r.Threads != runtime.GOMAXPROCS(0) {
		t.Errorf("%d threads, want %d: %v", r.Threads, runtime.GOMAXPROCS(0), err)
	}
}
