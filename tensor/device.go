package tensor

import (
	"errors"
	"fmt"
	"sync/atomic"

	"holdgo/rng"
)

// OpKind names one entry of the op list. Every device implements an op or
// reports ErrUnsupported for it; there is no silent fallback to another device.
type OpKind uint8

// The op list. Operand conventions (in = inputs, out = destination):
const (
	OpFill               OpKind = iota // out = Scalar
	OpCopy                             // out = in0 (same element count)
	OpNeg                              // out = -in0
	OpExp                              // out = exp(in0)
	OpLog                              // out = log(in0)
	OpSqrt                             // out = sqrt(in0)
	OpSquare                           // out = in0²
	OpTanh                             // out = tanh(in0)
	OpSigmoid                          // out = 1/(1+exp(-in0))
	OpSiLU                             // out = in0·sigmoid(in0)
	OpAddScalar                        // out = in0 + Scalar
	OpMulScalar                        // out = in0 · Scalar
	OpSiLUGrad                         // out = in1 · silu'(in0)      (in0 = x, in1 = dy; same shape)
	OpTanhGrad                         // out = in1 · (1 - in0²)      (in0 = tanh output)
	OpSigmoidGrad                      // out = in1 · in0 · (1 - in0) (in0 = sigmoid output)
	OpAdd                              // out = in0 + in1, broadcasting
	OpSub                              // out = in0 - in1, broadcasting
	OpMul                              // out = in0 · in1, broadcasting
	OpDiv                              // out = in0 / in1, broadcasting
	OpEq                               // out = 1 where in0 == in1 else 0, broadcasting
	OpMatMul                           // out = op(in0)·op(in1) + Beta·out, batched over leading dims
	OpSum                              // out = Σ in0 over Axes (out keeps the reduced axes as size 1)
	OpMax                              // out = max in0 over Axes (kept as size 1)
	OpPermute                          // out = in0 with axes permuted: out dim i = in dim Axes[i]
	OpConcat                           // out = in0, in1, … joined along Axis
	OpSlice                            // out = in0[Lo:Hi] along Axis
	OpSliceAdd                         // out[Lo:Hi along Axis] += in0
	OpGather                           // out[i] = in0[Index[i]] along axis 0
	OpScatterAdd                       // out[Index[i]] += in0[i] along axis 0
	OpConv2d                           // out = conv2d(in0 x NCHW, in1 w OIKK) (+ in2 bias O or N×O), Stride, Pad (conv.go)
	OpConv2dGradInput                  // out = conv2dᵀ(in0 dy, in1 w) + Beta·out: the input gradient
	OpConv2dGradWeight                 // out = Σ_n dy[n]·im2col(x[n])ᵀ + Beta·out (in0 x, in1 dy): the weight gradient
	OpGroupNorm                        // out = group-normalised in0 (Groups, eps Scalar)·in1 γ + in2 β (norm.go)
	OpGroupNormGrad                    // out = dx of GroupNorm (in0 x, in1 γ, in2 dy)
	OpGroupNormParamGrad               // out [2, C] = (dγ, dβ) of GroupNorm (in0 x, in1 dy)
	OpSoftmax                          // out = softmax of Scalar·in0 along the last axis
	OpSoftmaxGrad                      // out = Scalar·in0·(in1 − Σ in0·in1) along the last axis (in0 = softmax output, in1 = dy)
	OpUpFIRDn2d                        // out = upfirdn2d(in0, [1,3,3,1]ᵀ[1,3,3,1]/64·Scalar; Up, Down, Pad, Pad1) (fir.go)
	OpGroupNormSiLU                    // out = silu(GroupNorm(in0 x; in1 γ, in2 β)) in one pass (Groups, eps Scalar)
	OpGroupNormSiLUGrad                // out = dz = in3 dy·silu'(z), z = GroupNorm(in0 x; in1 γ, in2 β) recomputed
	OpSin                              // out = sin(in0) (Fourier features; cos x = sin(x + π/2))
	// The fused families (fused.go), in this order (isFused):
	OpFillNormal          // out = normal draws of Stream (rng.Stream.FillNormal)
	OpDropout             // out = in0·mask of Stream from element First, p = Coef[0] (rng.Stream.DropoutFrom)
	OpFourierEmbedding    // out (B, 2·W) = sin, cos of log(in0 t)·in1 w·2π
	OpPositionalEmbedding // out (B, dim) = the sinusoidal embedding of in0 t
	OpAdam                // out params −= clipped Adam of in0 grads; in1 m, in2 v updated; in3 stats (Coef)
	OpEMA                 // out shadow −= (1 − Coef[0])·(shadow − in0 params) unless in1 stats is non-finite
	OpSumSq               // out stats[1] = Σ in0²
	OpScoreLoss           // out grad = 2·(in0 − in1)/Coef[0]; in2 stats[0] = Σ (in0 − in1)²/Coef[0]
	OpPerturb             // out x = M·x0 + C·ε (in0 coef, in1 q0, in2 ε, in4 aux); in3 target = −ε_last
	OpBlockAffine         // out x ← A-halves(B(x, in0 score)) with the noises that follow (BlockAffine)
	numOps
)

var opNames = [numOps]string{
	"Fill", "Copy", "Neg", "Exp", "Log", "Sqrt", "Square", "Tanh", "Sigmoid", "SiLU",
	"AddScalar", "MulScalar", "SiLUGrad", "TanhGrad", "SigmoidGrad",
	"Add", "Sub", "Mul", "Div", "Eq", "MatMul", "Sum", "Max",
	"Permute", "Concat", "Slice", "SliceAdd", "Gather", "ScatterAdd",
	"Conv2d", "Conv2dGradInput", "Conv2dGradWeight", "GroupNorm", "GroupNormGrad", "GroupNormParamGrad",
	"Softmax", "SoftmaxGrad", "UpFIRDn2d", "GroupNormSiLU", "GroupNormSiLUGrad",
	"Sin",
	"FillNormal", "Dropout", "FourierEmbedding", "PositionalEmbedding", "Adam", "EMA", "SumSq", "ScoreLoss",
	"Perturb", "BlockAffine",
}

func (k OpKind) String() string {
	if k < numOps {
		return opNames[k]
	}
	return fmt.Sprintf("OpKind(%d)", k)
}

// Ops lists every op kind (tests enumerate it).
func Ops() []OpKind {
	out := make([]OpKind, numOps)
	for i := range out {
		out[i] = OpKind(i)
	}
	return out
}

// Op is one op of the list with its attributes.
type Op struct {
	Kind           OpKind
	Scalar         float32
	Beta           float32 // OpMatMul: accumulate factor for out
	TransA, TransB bool    // OpMatMul
	Axes           []int   // OpSum, OpMax, OpPermute
	Axis, Lo, Hi   int     // OpConcat, OpSlice, OpSliceAdd
	Index          []int   // OpGather, OpScatterAdd
	Stride, Pad    int     // OpConv2d*: stride and zero padding; OpUpFIRDn2d: Pad = padding before
	Pad1, Up, Down int     // OpUpFIRDn2d: padding after, up- and down-sampling factors
	Groups         int     // OpGroupNorm*

	Stream rng.Stream // OpFillNormal, OpDropout: the counter-based stream
	First  uint64     // OpDropout: the mask element of out's first element
	Coef   []float64  // float64 settings of the fused ops (fused.go): OpDropout [p]; OpAdam [β1, β2, ε, lr/bc1, √bc2, maxNorm]; OpEMA [decay]; OpScoreLoss [batch]; OpBlockAffine (BlockAffine.Coef)
	Blocks int        // OpPerturb, OpBlockAffine: the state's blocks n (B, n·d)
	Halves int        // OpBlockAffine: the A-halves after the B update
}

// ErrUnsupported is returned by a device for an op it does not implement.
var ErrUnsupported = errors.New("op not supported on this device")

// Device runs the op list on its own memory. CPU is the host implementation,
// Reference the plain definitions every other device is tested against
// (tensor/optest), and *cuda.Device (package cuda) the GPU. Exec receives
// shapes already checked by the op functions of this package. The fused
// families a training step and a device-resident sampler need (Philox fill
// and dropout, the time embeddings, the loss, clipped Adam and EMA, the HOLD
// reparameterisation and the block-affine sampler step; fused.go) are ops of
// the list like any other, so train, sample, layers and autograd see a device
// only through this interface (docs/architecture.md#the-device-seam).
type Device interface {
	Name() string
	Alloc(n int) (Buffer, error)
	Exec(op Op, out *Tensor, in ...*Tensor) error
}

// Buffer is device memory for n float32 elements.
type Buffer interface {
	Device() Device
	Len() int
	Read(dst []float32) error  // device → host
	Write(src []float32) error // host → device
	// Slice returns the n elements from offset on as a buffer of their own that aliases this
	// one's memory and keeps it alive (View).
	Slice(offset, n int) (Buffer, error)
}

// OpError is the error an op's result carries when the op could not run: its
// operands live on different devices, the device failed (ErrUnsupported, out
// of memory, a driver error), or an operand already carried an error.
type OpError struct {
	Op     OpKind
	Device string // the destination's device
	Other  string // for a device mismatch: the operand's device, else ""
	Err    error  // the device's error, or nil for a mismatch
}

func (e *OpError) Error() string {
	if e.Other != "" {
		return fmt.Sprintf("tensor: %v: operands on devices %q and %q; move them to one device first", e.Op, e.Device, e.Other)
	}
	return fmt.Sprintf("tensor: %v on device %q: %v", e.Op, e.Device, e.Err)
}

func (e *OpError) Unwrap() error { return e.Err }

// Errors of device ops are values, not panics. An op that cannot run leaves
// its destination unchanged and marks it with an *OpError; every op whose
// operand carries an error skips its work and passes the first such error on
// to its result, so a whole forward and backward pass can be issued without
// checks and the caller asks once, at a step boundary:
//
//	loss := model.Loss(x)
//	if err := tensor.Err(loss); err != nil { … }   // or loss.Err()
//
// Reading a failed tensor cannot go unnoticed: ToHost and ToDevice return its
// error, and Data (and Item) panic with it. An op that runs successfully
// clears its destination's error unless it accumulates into the destination
// (SliceAdd, ScatterAdd, MatMulAcc and the gradients' Beta ≠ 0), which passes
// the destination's error on. Shape errors stay panics: they are programmer
// errors, caught before any device work (see the package documentation).

// Err returns the error the tensor carries (nil for a good tensor).
func (t *Tensor) Err() error { return t.err }

// Err returns the first error carried by any of ts.
func Err(ts ...*Tensor) error {
	for _, t := range ts {
		if t != nil && t.err != nil {
			return t.err
		}
	}
	return nil
}

var observer atomic.Pointer[func(Op)]

// ObserveOps calls f with every op dispatched, on any device, until the
// returned function is called. One observer at a time (a second replaces the
// first); tests and tools use it to record which ops a workload runs
// (optest.Record).
func ObserveOps(f func(Op)) (stop func()) {
	observer.Store(&f)
	return func() { observer.CompareAndSwap(&f, nil) }
}

// readsOut reports whether op accumulates into its destination.
func readsOut(op Op) bool {
	switch op.Kind {
	case OpSliceAdd, OpScatterAdd, OpAdam, OpEMA, OpSumSq, OpBlockAffine:
		return true
	case OpMatMul, OpConv2dGradInput, OpConv2dGradWeight:
		return op.Beta != 0
	}
	return false
}

// exec dispatches op to the device that holds the operands, recording any
// failure on out (see OpError).
func exec(op Op, out *Tensor, in ...*Tensor) {
	if f := observer.Load(); f != nil {
		(*f)(op)
	}
	observeExec(op, out, in)
	if out.buf == nil && out.data == nil && out.Len() > 0 { // its allocation failed
		return
	}
	if err := Err(in...); err != nil {
		out.err = err
		return
	}
	if out.err != nil && readsOut(op) {
		return
	}
	dev := out.Device()
	for _, t := range in {
		if t.Device() != dev {
			out.err = &OpError{Op: op.Kind, Device: dev.Name(), Other: t.Device().Name()}
			return
		}
	}
	if err := dev.Exec(op, out, in...); err != nil {
		out.err = &OpError{Op: op.Kind, Device: dev.Name(), Err: err}
		return
	}
	out.err = nil
}

// dest returns out if it is non-nil (checking its shape), else a new tensor
// of the shape on the device of like.
func dest(out *Tensor, shape []int, like *Tensor, op string) *Tensor {
	if out == nil {
		return newOn(like.Device(), shape)
	}
	if !shapeEq(out.shape, shape) {
		panic(fmt.Sprintf("tensor: %s: destination shape %s, want %s", op, fmtShape(out.shape), fmtShape(shape)))
	}
	return out
}

func shapeEq(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
