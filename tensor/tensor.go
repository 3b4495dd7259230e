// Package tensor holds holdgo's dense row-major float32 tensors and the op
// list that every device implements.
//
// A Tensor is a shape plus storage. Host tensors keep their elements in a Go
// slice; a tensor on another device (see Device) keeps a Buffer instead, and
// the same op functions dispatch to that device. Each op takes its
// destination first: pass nil to allocate a new tensor, or a tensor of the
// right shape to reuse its memory (training loops do this through a Pool, so a
// step allocates no tensor memory once warm). Shape errors are programmer
// errors and panic with a message naming the op and the shapes; code that
// handles user input validates shapes before calling ops. Device failures
// (operands on two devices, an op a device lacks, out of device memory) are
// not panics: the result carries an *OpError, later ops pass it on, and the
// caller checks Err once per step (device.go).
package tensor

import (
	"fmt"
	"holdgo/internal/hugepage"
	"slices"
	"strconv"
	"strings"
)

// Tensor is a dense row-major float32 array.
type Tensor struct {
	shape []int
	data  []float32 // host storage; nil when the tensor lives on another device
	buf   Buffer    // device storage; nil on the host
	err   error     // set when the op that produced the tensor failed (device.go)
	// frozen holds the forms operations derived from a frozen tensor (Freeze); nil when not frozen.
	frozen *frozenForms
}

// numel returns the element count of shape; it panics on a negative dimension.
func numel(shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic("tensor: negative dimension in shape " + fmtShape(shape))
		}
		n *= d
	}
	return n
}

// Zeros returns a new host tensor of the given shape filled with zeros.
// Buffers of 4 MiB and more are advised for huge pages (internal/hugepage).
func Zeros(shape ...int) *Tensor {
	return &Tensor{shape: slices.Clone(shape), data: hugepage.Make(numel(shape))}
}

// Full returns a new host tensor filled with v.
func Full(v float32, shape ...int) *Tensor {
	t := Zeros(shape...)
	for i := range t.data {
		t.data[i] = v
	}
	return t
}

// FromSlice wraps data (not copied) as a host tensor of the given shape.
func FromSlice(data []float32, shape ...int) *Tensor {
	if n := numel(shape); n != len(data) {
		panic(fmt.Sprintf("tensor: FromSlice: %d elements for shape %v (needs %d)", len(data), shape, n))
	}
	return &Tensor{shape: slices.Clone(shape), data: data}
}

// Scalar returns a shape-[] tensor holding v.
func Scalar(v float32) *Tensor { return &Tensor{shape: []int{}, data: []float32{v}} }

// Shape returns the tensor's shape (do not modify it).
func (t *Tensor) Shape() []int { return t.shape }

// Dim returns dimension i; negative i counts from the end.
func (t *Tensor) Dim(i int) int { return t.shape[axis(i, len(t.shape), "Dim")] }

// Rank is the number of dimensions.
func (t *Tensor) Rank() int { return len(t.shape) }

// Len is the number of elements.
func (t *Tensor) Len() int { return numel(t.shape) }

// OnHost reports whether the tensor's storage is host memory.
func (t *Tensor) OnHost() bool { return t.buf == nil }

// Device returns the device holding the tensor's storage.
func (t *Tensor) Device() Device {
	if t.buf != nil {
		return t.buf.Device()
	}
	return CPU
}

// Data returns the host storage. It panics for a tensor on another device:
// copy it to the host first with ToHost.
func (t *Tensor) Data() []float32 {
	if t.err != nil {
		panic(fmt.Sprintf("tensor: Data of a tensor whose op failed: %v", t.err))
	}
	if t.buf != nil {
		panic(fmt.Sprintf("tensor: Data of a tensor on device %q; call ToHost first", t.buf.Device().Name()))
	}
	return t.data
}

// Buffer returns the device storage; for a host tensor, its host memory as a Buffer of the CPU
// device (Read and Write of that very memory copy nothing).
func (t *Tensor) Buffer() Buffer {
	if t.buf == nil {
		return &cpuBuffer{t.data}
	}
	return t.buf
}

// Item returns the single element of a one-element host tensor.
func (t *Tensor) Item() float32 {
	if t.Len() != 1 {
		panic(fmt.Sprintf("tensor: Item of shape %v", t.shape))
	}
	return t.Data()[0]
}

// Reshape returns a view with a new shape sharing t's storage. One dimension
// may be -1 and is inferred.
func (t *Tensor) Reshape(shape ...int) *Tensor {
	shape = slices.Clone(shape)
	infer, known := -1, 1
	for i, d := range shape {
		switch {
		case d == -1 && infer < 0:
			infer = i
		case d < 0:
			panic(fmt.Sprintf("tensor: Reshape %v to %v: bad dimension", t.shape, shape))
		default:
			known *= d
		}
	}
	n := t.Len()
	if infer >= 0 {
		if known == 0 || n%known != 0 {
			panic(fmt.Sprintf("tensor: Reshape %v to %v: cannot infer dimension", t.shape, shape))
		}
		shape[infer] = n / known
		known = n
	}
	if known != n {
		panic(fmt.Sprintf("tensor: Reshape %v (%d elements) to %v (%d)", t.shape, n, shape, known))
	}
	return &Tensor{shape: shape, data: t.data, buf: t.buf, err: t.err}
}

// Clone returns a deep copy on the same device.
func (t *Tensor) Clone() *Tensor { return Copy(nil, t) }

// SameShape reports whether a and b have equal shapes.
func SameShape(a, b *Tensor) bool { return slices.Equal(a.shape, b.shape) }

// String prints the shape and up to 8 leading elements of host tensors.
func (t *Tensor) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Tensor%v", t.shape)
	if t.buf != nil {
		fmt.Fprintf(&sb, "@%s", t.buf.Device().Name())
		return sb.String()
	}
	n := min(len(t.data), 8)
	fmt.Fprintf(&sb, "%v", t.data[:n])
	if n < len(t.data) {
		sb.WriteString("…")
	}
	return sb.String()
}

// axis normalises a possibly negative axis index for rank r.
func axis(a, r int, op string) int {
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r {
		panic(fmt.Sprintf("tensor: %s: axis out of range for rank %d", op, r))
	}
	return a
}

// newLike allocates a tensor of the given shape on dev.
func newOn(dev Device, shape []int) *Tensor {
	if dev == CPU {
		return Zeros(shape...)
	}
	buf, err := dev.Alloc(numel(shape))
	if err != nil { // a tensor without storage that carries the error (see Err)
		return &Tensor{shape: slices.Clone(shape), err: fmt.Errorf("tensor: alloc %s on %s: %w", fmtShape(shape), dev.Name(), err)}
	}
	return &Tensor{shape: slices.Clone(shape), buf: buf}
}

// New allocates a zeroed tensor of the given shape on dev.
func New(dev Device, shape ...int) *Tensor { return newOn(dev, shape) }

// ToDevice copies t to dev (a no-op copy-free return if already there).
func (t *Tensor) ToDevice(dev Device) (*Tensor, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.Device() == dev {
		return t, nil
	}
	host := t
	if t.buf != nil {
		var err error
		if host, err = t.ToHost(); err != nil {
			return nil, err
		}
	}
	if dev == CPU {
		return host, nil
	}
	buf, err := dev.Alloc(host.Len())
	if err != nil {
		return nil, fmt.Errorf("tensor: alloc %v on %s: %w", t.shape, dev.Name(), err)
	}
	if err := buf.Write(host.data); err != nil {
		return nil, fmt.Errorf("tensor: copy %v to %s: %w", t.shape, dev.Name(), err)
	}
	return &Tensor{shape: slices.Clone(t.shape), buf: buf}, nil
}

// ToHost copies a device tensor to host memory (returns t if already there).
func (t *Tensor) ToHost() (*Tensor, error) {
	if t.err != nil {
		return nil, t.err
	}
	if t.buf == nil {
		return t, nil
	}
	out := Zeros(t.shape...)
	if err := t.buf.Read(out.data); err != nil {
		return nil, fmt.Errorf("tensor: copy %v from %s: %w", t.shape, t.buf.Device().Name(), err)
	}
	return out, nil
}

// fmtShape formats a shape like %v without making it escape to the heap
// (hot paths build panic messages from shapes).
func fmtShape(s []int) string {
	b := []byte{'['}
	for i, d := range s {
		if i > 0 {
			b = append(b, ' ')
		}
		b = strconv.AppendInt(b, int64(d), 10)
	}
	return string(append(b, ']'))
}
