package tensor

import "sync/atomic"

// FLOPs is the floating-point work of op on its operands, as the benchmarks
// count it (holdctl bench and model info print GFLOP/s from it):
//
//   - MatMul: 2·M·N·K per batch entry (a multiply and an add per term; the
//     Beta·out of an accumulation is not counted).
//   - Conv2d and its two gradients: the direct convolution's
//     2·N·O·Ho·Wo·C·KH·KW, whatever algorithm the device runs; a Winograd
//     kernel does fewer multiplications and so can run at more than the
//     machine's FMA peak by this count. The bias add is not counted.
//   - UpFIRDn2d: a multiply and an add per non-zero tap of the 4×4 filter,
//     16/(Up·Up) taps per output element.
//   - Data movement (Fill, Copy, Permute, Concat, Slice, Gather) counts 0.
//   - Every other op counts one FLOP per element it reads or writes,
//     whichever is more (an Exp, a broadcast Add, a Sum over axes, a
//     GroupNorm, a Softmax); SliceAdd and ScatterAdd one per element added.
//     This understates the transcendental and normalisation ops, which take
//     several instructions per element, but they are bound by memory, not by
//     arithmetic, and a small share of a convolutional network's FLOPs.
//
// Each op's rule is its row's flops function in the op table (optable.go).
func FLOPs(op Op, out *Tensor, in ...*Tensor) int64 {
	if op.Kind < numOps {
		if f := opTable[op.Kind].flops; f != nil {
			return f(op, out, in)
		}
	}
	n := out.Len()
	for _, t := range in {
		n = max(n, t.Len())
	}
	return int64(n)
}

// flopsNone is the rule of data movement.
func flopsNone(Op, *Tensor, []*Tensor) int64 { return 0 }

// flopsMatMul: out (…, M, N), in0 (…, M, K) or (…, K, M) under TransA.
func flopsMatMul(op Op, out *Tensor, in []*Tensor) int64 {
	a := in[0].shape
	k := a[len(a)-1]
	if op.TransA {
		k = a[len(a)-2]
	}
	return 2 * int64(out.Len()) * int64(k)
}

// flopsConv2d: out y (N, O, Ho, Wo); in1 w (O, C, KH, KW).
func flopsConv2d(_ Op, out *Tensor, in []*Tensor) int64 {
	w := in[1]
	return 2 * int64(out.Len()) * int64(w.Len()/w.shape[0])
}

// flopsConv2dGradInput: in0 dy (N, O, Ho, Wo); in1 w (O, C, KH, KW).
func flopsConv2dGradInput(_ Op, _ *Tensor, in []*Tensor) int64 {
	w := in[1]
	return 2 * int64(in[0].Len()) * int64(w.Len()/w.shape[0])
}

// flopsConv2dGradWeight: out dw (O, C, KH, KW); in1 dy (N, O, Ho, Wo).
func flopsConv2dGradWeight(_ Op, out *Tensor, in []*Tensor) int64 {
	return 2 * int64(in[1].Len()) * int64(out.Len()/out.shape[0])
}

func flopsFIR(op Op, out *Tensor, _ []*Tensor) int64 {
	return 2 * int64(out.Len()) * 16 / int64(op.Up*op.Up)
}

// flopsAdded is the rule of SliceAdd and ScatterAdd: one per element added.
func flopsAdded(_ Op, _ *Tensor, in []*Tensor) int64 { return int64(in[0].Len()) }

var execObserver atomic.Pointer[func(Op, *Tensor, []*Tensor)]

// ObserveExec calls f with every op dispatched and its operands, on any
// device, until the returned function is called: a benchmark counts a
// workload's FLOPs this way (FLOPs). One observer at a time (a second
// replaces the first); f must not keep or change the tensors.
func ObserveExec(f func(op Op, out *Tensor, in []*Tensor)) (stop func()) {
	execObserver.Store(&f)
	return func() { execObserver.CompareAndSwap(&f, nil) }
}

// observeExec hands an op about to be dispatched to the ObserveExec observer.
func observeExec(op Op, out *Tensor, in []*Tensor) {
	if f := execObserver.Load(); f != nil {
		(*f)(op, out, in)
	}
}
