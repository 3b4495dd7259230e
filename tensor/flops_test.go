package tensor_test

import (
	"testing"

	"holdgo/tensor"
)

// countFLOPs runs f and returns the FLOPs of each op kind it dispatched.
func countFLOPs(f func()) map[tensor.OpKind]int64 {
	got := map[tensor.OpKind]int64{}
	stop := tensor.ObserveExec(func(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor) {
		got[op.Kind] += tensor.FLOPs(op, out, in...)
	})
	defer stop()
	f()
	return got
}

// The FLOP counts of the benchmarks' GFLOP/s, against hand-computed values:
// a convolution counts as the direct convolution whatever kernel runs (here
// a 3×3 stride-1 one, which the CPU device may run as Winograd), a matmul as
// 2·M·N·K per batch entry.
func TestFLOPsHandCounted(t *testing.T) {
	x, w := tensor.Zeros(2, 3, 5, 5), tensor.Zeros(4, 3, 3, 3) // N=2, C=3, 5×5; O=4, 3×3
	b := tensor.Zeros(7, 5)
	for _, tc := range []struct {
		name string
		f    func()
		kind tensor.OpKind
		want int64
	}{
		// 2·N·O·Ho·Wo·C·KH·KW = 2·2·4·5·5·3·3·3, output 5×5 with pad 1.
		{"conv 3×3 pad 1", func() { tensor.Conv2d(nil, x, w, tensor.Zeros(4), 1, 1) }, tensor.OpConv2d, 10_800},
		// Stride 2, no padding: output 2×2, 2·2·4·2·2·3·3·3.
		{"conv 3×3 stride 2", func() { tensor.Conv2d(nil, x, w, nil, 2, 0) }, tensor.OpConv2d, 1_728},
		// The input gradient of the first: the same products, run backwards.
		{"conv grad input", func() { tensor.Conv2dGradInput(tensor.Zeros(2, 3, 5, 5), tensor.Zeros(2, 4, 5, 5), w, 1, 1, 0) },
			tensor.OpConv2dGradInput, 10_800},
		{"conv grad weight", func() { tensor.Conv2dGradWeight(tensor.Zeros(4, 3, 3, 3), x, tensor.Zeros(2, 4, 5, 5), 1, 1, 0) },
			tensor.OpConv2dGradWeight, 10_800},
		// A 1×1 convolution is a matmul of 2·(O=4)·(N·H·W=50)·(C=3).
		{"conv 1×1", func() { tensor.Conv2d(nil, x, tensor.Zeros(4, 3, 1, 1), nil, 1, 0) }, tensor.OpConv2d, 1_200},
		// (3×7)·(7×5): 2·3·5·7.
		{"matmul", func() { tensor.MatMul(nil, tensor.Zeros(3, 7), tensor.Zeros(7, 5), false, false) }, tensor.OpMatMul, 210},
		// Aᵀ stored 7×3, Bᵀ stored 5×7: the same product.
		{"matmul transposed", func() { tensor.MatMul(nil, tensor.Zeros(7, 3), tensor.Zeros(5, 7), true, true) }, tensor.OpMatMul, 210},
		// A batch of 4 of them, B shared: 4·210; accumulating into the output adds nothing.
		{"matmul batched", func() { tensor.MatMulAcc(tensor.Zeros(4, 3, 5), tensor.Zeros(4, 3, 7), b, false, false, 1) },
			tensor.OpMatMul, 840},
		// Upsampling 2×: 4 non-zero taps of 16 per output element, 2·4 FLOPs each, 1·2·8·8 outputs.
		{"upsample", func() { tensor.UpFIRDn2d(nil, tensor.Zeros(1, 2, 4, 4), tensor.FIRUpsample) }, tensor.OpUpFIRDn2d, 1_024},
		// Downsampling 2×: all 16 taps, 1·2·2·2 outputs.
		{"downsample", func() { tensor.UpFIRDn2d(nil, tensor.Zeros(1, 2, 4, 4), tensor.FIRDownsample) }, tensor.OpUpFIRDn2d, 256},
		// Element-wise and reductions: one per element read or written, whichever is more.
		{"broadcast add", func() { tensor.Add(nil, tensor.Zeros(6, 5), tensor.Zeros(5)) }, tensor.OpAdd, 30},
		{"sum", func() { tensor.Sum(nil, tensor.Zeros(6, 5), 1) }, tensor.OpSum, 30},
		{"exp", func() { tensor.Exp(nil, tensor.Zeros(6, 5)) }, tensor.OpExp, 30},
		// Data movement counts nothing.
		{"permute", func() { tensor.Permute(nil, tensor.Zeros(6, 5), 1, 0) }, tensor.OpPermute, 0},
	} {
		got := countFLOPs(tc.f)
		if got[tc.kind] != tc.want {
			t.Errorf("%s: %d FLOPs of %v, want %d (all: %v)", tc.name, got[tc.kind], tc.kind, tc.want, got)
		}
	}
}

// Stopping the observer stops the counting; a second observer replaces the first.
func TestObserveExecStop(t *testing.T) {
	n := 0
	stop := tensor.ObserveExec(func(tensor.Op, *tensor.Tensor, []*tensor.Tensor) { n++ })
	tensor.Exp(nil, tensor.Zeros(3))
	stop()
	tensor.Exp(nil, tensor.Zeros(3))
	if n != 1 {
		t.Fatalf("observer called %d times, want 1", n)
	}
	m := 0
	stop1 := tensor.ObserveExec(func(tensor.Op, *tensor.Tensor, []*tensor.Tensor) { n++ })
	stop2 := tensor.ObserveExec(func(tensor.Op, *tensor.Tensor, []*tensor.Tensor) { m++ })
	stop1() // no longer the observer: changes nothing
	tensor.Exp(nil, tensor.Zeros(3))
	stop2()
	if n != 1 || m != 1 {
		t.Fatalf("after replacing: first observer %d calls, second %d, want 1 and 1", n, m)
	}
}
