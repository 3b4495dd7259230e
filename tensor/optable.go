package tensor

//go:generate go run ../internal/opgen

import (
	"fmt"
	"math"
)

// The op table: one row per op of the list, in list order, and the one place an op is declared.
// internal/opgen reads this file (go generate ./tensor; make ptx runs it too) and writes
//
//   - ops_gen.go: the OpKind constants (each commented with its row's doc) and their names;
//   - kernels/ops_gen.h: the op codes hg_unary and hg_binary switch on (ClassUnary rows in order;
//     ClassBinary then ClassPair rows in order);
//   - cuda/opcodes_gen.go: the same codes for the CUDA device's dispatch.
//
// Everything else is derived from the row at run time: which kernel family runs an op on the
// Reference and CPU devices and on CUDA (its class), FLOPs, whether an op reads its destination,
// the number of inputs exec accepts, and the backend table's cases of the element-wise ops
// (tensor/optest). A new element-wise op is one row here, its public function (ops.go) and its
// CUDA C expression (kernels/elementwise.cu); the CPU device runs the row's reference function
// until it is given a faster kernel (cpu.go).

// OpClass is an op's family: its operands and which kernels run it.
type OpClass uint8

const (
	ClassFill   OpClass = iota // out = Scalar, no input
	ClassCopy                  // out = in0, element for element
	ClassUnary                 // out = f(Scalar, in0) element-wise, same shape (CUDA: hg_unary)
	ClassPair                  // out = f(in0, in1) element-wise, same shapes (CUDA: hg_binary)
	ClassBinary                // out = f(in0, in1) element-wise with broadcasting (CUDA: hg_binary, hg_binary_bcast)
	ClassMatMul                // batched GEMM
	ClassReduce                // reductions over axes
	ClassLayout                // data movement: permute, concatenate, slice, gather, scatter
	ClassImage                 // convolutions, group norm, softmax, FIR (conv.go, norm.go, fir.go)
	ClassFused                 // the fused families of a training step and a sampler (fused.go)
	numClasses
)

var classNames = [numClasses]string{"Fill", "Copy", "Unary", "Pair", "Binary", "MatMul", "Reduce", "Layout", "Image", "Fused"}

func (c OpClass) String() string {
	if c < numClasses {
		return classNames[c]
	}
	return fmt.Sprintf("OpClass(%d)", c)
}

// outUse says whether an op reads its destination before writing it.
type outUse uint8

const (
	writesOut      outUse = iota // overwrites out
	readsOutAlways               // accumulates into out (or updates it in place)
	readsOutIfBeta               // accumulates Beta·out when Op.Beta ≠ 0
)

// arity is the number of inputs an op takes: at least min, at most max.
type arity struct{ min, max int }

func exactly(n int) arity      { return arity{n, n} }
func between(lo, hi int) arity { return arity{lo, hi} }

// opInfo is one row of the op table.
type opInfo struct {
	doc      string // the definition, in = inputs, out = destination (the OpKind constant's comment)
	class    OpClass
	in       arity
	out      outUse
	positive bool // ClassUnary: defined for positive inputs (the backend table draws |x| + 0.1)
	// flops is the op's FLOPs rule (flops.go); nil counts one per element read or written.
	flops func(op Op, out *Tensor, in []*Tensor) int64
	// The reference definition: unary (ClassUnary, s = Scalar) and binary (ClassPair, ClassBinary)
	// in float64, rounded once by the caller; ref, every other class's Reference-device kernel.
	unary  func(s, x float64) float64
	binary func(a, b float64) float64
	ref    func(op Op, out *Tensor, in []*Tensor)
}

var opTable = [numOps]opInfo{
	OpFill: {doc: "out = Scalar", class: ClassFill, in: exactly(0), flops: flopsNone, ref: refFill},
	OpCopy: {doc: "out = in0 (same element count)", class: ClassCopy, in: exactly(1), flops: flopsNone, ref: refCopy},
	OpNeg: {doc: "out = -in0", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return -x }},
	OpExp: {doc: "out = exp(in0)", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return math.Exp(x) }},
	OpLog: {doc: "out = log(in0)", class: ClassUnary, in: exactly(1), positive: true,
		unary: func(_, x float64) float64 { return math.Log(x) }},
	OpSqrt: {doc: "out = sqrt(in0)", class: ClassUnary, in: exactly(1), positive: true,
		unary: func(_, x float64) float64 { return math.Sqrt(x) }},
	OpSquare: {doc: "out = in0²", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return x * x }},
	OpTanh: {doc: "out = tanh(in0)", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return math.Tanh(x) }},
	OpSigmoid: {doc: "out = 1/(1+exp(-in0))", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
	OpSiLU: {doc: "out = in0·sigmoid(in0)", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return x / (1 + math.Exp(-x)) }},
	OpAddScalar: {doc: "out = in0 + Scalar", class: ClassUnary, in: exactly(1),
		unary: func(s, x float64) float64 { return x + s }},
	OpMulScalar: {doc: "out = in0 · Scalar", class: ClassUnary, in: exactly(1),
		unary: func(s, x float64) float64 { return x * s }},
	OpSiLUGrad: {doc: "out = in1 · silu'(in0)      (in0 = x, in1 = dy; same shape)", class: ClassPair, in: exactly(2),
		binary: func(a, b float64) float64 { // a = x, b = dy
			sg := 1 / (1 + math.Exp(-a))
			return b * sg * (1 + a*(1-sg))
		}},
	OpTanhGrad: {doc: "out = in1 · (1 - in0²)      (in0 = tanh output)", class: ClassPair, in: exactly(2),
		binary: func(a, b float64) float64 { return b * (1 - a*a) }},
	OpSigmoidGrad: {doc: "out = in1 · in0 · (1 - in0) (in0 = sigmoid output)", class: ClassPair, in: exactly(2),
		binary: func(a, b float64) float64 { return b * a * (1 - a) }},
	OpAdd: {doc: "out = in0 + in1, broadcasting", class: ClassBinary, in: exactly(2),
		binary: func(a, b float64) float64 { return a + b }},
	OpSub: {doc: "out = in0 - in1, broadcasting", class: ClassBinary, in: exactly(2),
		binary: func(a, b float64) float64 { return a - b }},
	OpMul: {doc: "out = in0 · in1, broadcasting", class: ClassBinary, in: exactly(2),
		binary: func(a, b float64) float64 { return a * b }},
	OpDiv: {doc: "out = in0 / in1, broadcasting", class: ClassBinary, in: exactly(2),
		binary: func(a, b float64) float64 { return a / b }},
	OpEq: {doc: "out = 1 where in0 == in1 else 0, broadcasting", class: ClassBinary, in: exactly(2),
		binary: func(a, b float64) float64 {
			if a == b {
				return 1
			}
			return 0
		}},
	OpMatMul: {doc: "out = op(in0)·op(in1) + Beta·out, batched over leading dims", class: ClassMatMul, in: exactly(2),
		out: readsOutIfBeta, flops: flopsMatMul, ref: refMatMul},
	OpSum: {doc: "out = Σ in0 over Axes (out keeps the reduced axes as size 1)", class: ClassReduce, in: exactly(1), ref: refReduce},
	OpMax: {doc: "out = max in0 over Axes (kept as size 1)", class: ClassReduce, in: exactly(1), ref: refReduce},
	OpPermute: {doc: "out = in0 with axes permuted: out dim i = in dim Axes[i]", class: ClassLayout, in: exactly(1),
		flops: flopsNone, ref: refPermute},
	OpConcat: {doc: "out = in0, in1, … joined along Axis", class: ClassLayout, in: between(1, math.MaxInt),
		flops: flopsNone, ref: refConcat},
	OpSlice: {doc: "out = in0[Lo:Hi] along Axis", class: ClassLayout, in: exactly(1), flops: flopsNone, ref: refSlice},
	OpSliceAdd: {doc: "out[Lo:Hi along Axis] += in0", class: ClassLayout, in: exactly(1), out: readsOutAlways,
		flops: flopsAdded, ref: refSlice},
	OpGather: {doc: "out[i] = in0[Index[i]] along axis 0", class: ClassLayout, in: exactly(1), flops: flopsNone, ref: refRows},
	OpScatterAdd: {doc: "out[Index[i]] += in0[i] along axis 0", class: ClassLayout, in: exactly(1), out: readsOutAlways,
		flops: flopsAdded, ref: refRows},
	OpConv2d: {doc: "out = conv2d(in0 x NCHW, in1 w OIKK) (+ in2 bias O or N×O) (+ in3 bias N×O after an O in2: (in2 + in3) added), Stride, Pad (conv.go)", class: ClassImage,
		in: between(2, 4), flops: flopsConv2d, ref: refConv2d},
	OpConv2dResidual: {doc: "out = (in3 r + conv2d(in0 x, in1 w) + in2 bias O)·Scalar, the sum with r rounded first (a convolution ending in a residual join)",
		class: ClassImage, in: exactly(4), flops: flopsConv2d, ref: refConv2d},
	OpConv2dGradInput: {doc: "out = conv2dᵀ(in0 dy, in1 w) + Beta·out: the input gradient", class: ClassImage, in: exactly(2),
		out: readsOutIfBeta, flops: flopsConv2dGradInput, ref: refConv2dGradInput},
	OpConv2dGradWeight: {doc: "out = Σ_n dy[n]·im2col(x[n])ᵀ + Beta·out (in0 x, in1 dy): the weight gradient; in2 db += Σ_{n,p} dy (O)", class: ClassImage,
		in: between(2, 3), out: readsOutIfBeta, flops: flopsConv2dGradWeight, ref: refConv2dGradWeight},
	OpGroupNorm: {doc: "out = group-normalised in0 (Groups, eps Scalar)·in1 γ + in2 β (norm.go)", class: ClassImage,
		in: exactly(3), ref: refGroupNorm},
	OpGroupNormBackward: {doc: "out = dx + Beta·out of GroupNorm (in0 x, in1 γ, in2 dy); in3 dγ += Σ dy·x̂, in4 dβ += Σ dy (one pass)",
		class: ClassImage, in: exactly(5), out: readsOutIfBeta, ref: refGroupNorm},
	OpSoftmax: {doc: "out = softmax of Scalar·in0 along the last axis", class: ClassImage, in: exactly(1), ref: refSoftmax},
	OpSoftmaxGrad: {doc: "out = Scalar·in0·(in1 − Σ in0·in1) along the last axis (in0 = softmax output, in1 = dy)",
		class: ClassImage, in: exactly(2), ref: refSoftmax},
	OpUpFIRDn2d: {doc: "out = upfirdn2d(in0, [1,3,3,1]ᵀ[1,3,3,1]/64·Scalar; Up, Down, Pad, Pad1) (fir.go)", class: ClassImage,
		in: exactly(1), flops: flopsFIR, ref: refUpFIRDn2d},
	OpGroupNormSiLU: {doc: "out = silu(GroupNorm(in0 x; in1 γ, in2 β)) in one pass (Groups, eps Scalar)", class: ClassImage,
		in: exactly(3), ref: refGroupNorm},
	OpGroupNormSiLUBackward: {doc: "out = dx + Beta·out of GroupNormSiLU (in0 x, in1 γ, in2 β, in3 dy); in4 dγ, in5 dβ += as GroupNormBackward's",
		class: ClassImage, in: exactly(6), out: readsOutIfBeta, ref: refGroupNorm},
	OpSin: {doc: "out = sin(in0) (Fourier features; cos x = sin(x + π/2))", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return math.Sin(x) }},
	OpSoftplus: {doc: "out = log(1 + exp(in0)), as max(in0, 0) + log1p(exp(−|in0|))", class: ClassUnary, in: exactly(1),
		unary: func(_, x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }},
	// The fused families (fused.go): their plain loops (fusedExec) are the reference; the CPU runs
	// Adam, EMA, SumSq and Perturb with internal/vec (cpu_fused.go).
	OpFillNormal: {doc: "out = normal draws of Stream from element First (rng.Stream.FillNormalFrom)", class: ClassFused, in: exactly(0), ref: refFused},
	OpDropout: {doc: "out = in0·mask of Stream from element First, p = Coef[0] (rng.Stream.DropoutFrom)", class: ClassFused,
		in: exactly(1), ref: refFused},
	// GroupNormSiLU then Dropout (NCSN++'s ResnetBlock) as one op and its backward: the mask is
	// regenerated from its counters in both passes, never stored (norm.go).
	OpGroupNormSiLUDropout: {doc: "out = GroupNormSiLU(in0 x; in1 γ, in2 β)·mask of Stream from element First, p = Coef[0]: Dropout's output in one pass",
		class: ClassFused, in: exactly(3), ref: refGroupNormSiLUDropout},
	OpGroupNormSiLUDropoutBackward: {doc: "out = dx + Beta·out of GroupNormSiLUDropout: GroupNormSiLUBackward of in3 dy·mask (in0 x, in1 γ, in2 β); in4 dγ, in5 dβ +=",
		class: ClassFused, in: exactly(6), out: readsOutIfBeta, ref: refGroupNormSiLUDropout},
	OpFourierEmbedding: {doc: "out (B, 2·W) = sin, cos of log(in0 t)·in1 w·2π", class: ClassFused, in: exactly(2), ref: refFused},
	OpPositionalEmbedding: {doc: "out (B, dim) = the sinusoidal embedding of in0 t", class: ClassFused, in: exactly(1),
		ref: refFused},
	OpAdam: {doc: "out params −= clipped Adam of in0 grads; in1 m, in2 v updated; in3 stats (Coef)", class: ClassFused,
		in: exactly(4), out: readsOutAlways, ref: refFused},
	OpEMA: {doc: "out shadow −= (1 − Coef[0])·(shadow − in0 params) unless in1 stats is non-finite", class: ClassFused,
		in: exactly(2), out: readsOutAlways, ref: refFused},
	OpSumSq: {doc: "out stats[1] = Σ in0²", class: ClassFused, in: exactly(1), out: readsOutAlways, ref: refFused},
	OpAddScaled: {doc: "out = (in0 + in1)·Scalar, same shapes, the sum rounded to float32 first (a residual join and its scale)",
		class: ClassFused, in: exactly(2), ref: refFused},
	OpScoreLoss: {doc: "out grad = 2·(in0 − in1)/Coef[0]; in2 stats[0] = Σ (in0 − in1)²/Coef[0]", class: ClassFused, in: exactly(3), ref: refFused},
	OpPerturb: {doc: "out x = M·x0 + C·ε (in0 coef, in1 q0, in2 ε, in4 aux); in3 target = −ε_last", class: ClassFused,
		in: between(4, 5), ref: refFused},
	OpBlockAffine: {doc: "out x ← A-halves(B(x, in0 score)) with the noises that follow (BlockAffine)", class: ClassFused,
		in: between(0, 3), out: readsOutAlways, ref: refFused},
}

// Class returns the op's family (numClasses, which prints as OpClass(10), for a kind not in the list).
func (k OpKind) Class() OpClass {
	if k >= numOps {
		return numClasses
	}
	return opTable[k].class
}

// Positive reports whether an element-wise op is defined only for positive inputs (Log, Sqrt).
func (k OpKind) Positive() bool { return k < numOps && opTable[k].positive }

// readsOut reports whether op accumulates into its destination.
func readsOut(op Op) bool {
	switch opTable[op.Kind].out {
	case readsOutAlways:
		return true
	case readsOutIfBeta:
		return op.Beta != 0
	}
	return false
}

// checkArity panics when op gets a number of inputs its row does not allow: a programmer error,
// like a shape mismatch.
func checkArity(op Op, in []*Tensor) {
	if op.Kind >= numOps {
		panic(fmt.Sprintf("tensor: %v is not an op of the list", op.Kind))
	}
	if a := opTable[op.Kind].in; len(in) < a.min || len(in) > a.max {
		panic(fmt.Sprintf("tensor: %v takes %d to %d inputs, got %d", op.Kind, a.min, a.max, len(in)))
	}
}
