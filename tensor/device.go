package tensor

import (
	"errors"
	"fmt"
	"sync/atomic"

	"holdgo/rng"
)

// OpKind names one entry of the op list. Every device implements an op or
// reports ErrUnsupported for it; there is no silent fallback to another device.
// The kinds, their names and their definitions are generated from the op table
// (optable.go) into ops_gen.go.
type OpKind uint8

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
	Beta           float32 // OpMatMul, OpConv2dGrad*, OpGroupNorm*Backward: accumulate factor for out
	TransA, TransB bool    // OpMatMul
	Axes           []int   // OpSum, OpMax, OpPermute
	Axis, Lo, Hi   int     // OpConcat, OpSlice, OpSliceAdd
	Index          []int   // OpGather, OpScatterAdd
	Stride, Pad    int     // OpConv2d*: stride and zero padding; OpUpFIRDn2d: Pad = padding before
	Pad1, Up, Down int     // OpUpFIRDn2d: padding after, up- and down-sampling factors
	Groups         int     // OpGroupNorm*

	Stream rng.Stream // OpFillNormal, OpDropout: the counter-based stream
	First  uint64     // OpFillNormal, OpDropout: the draw of out's first element
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

// HostResident reports whether dev keeps its tensors in this process's host memory (the CPU and
// the Reference device): what it allocates counts against the host's memory budget.
func HostResident(dev Device) bool {
	switch dev.(type) {
	case cpuDevice, refDevice:
		return true
	}
	return false
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

// exec dispatches op to the device that holds the operands, recording any
// failure on out (see OpError).
func exec(op Op, out *Tensor, in ...*Tensor) {
	checkArity(op, in)
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
