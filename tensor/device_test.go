package tensor

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeDevice is a stand-in for a GPU: its memory is not host memory (float64
// cells behind the Buffer interface), it counts transfers and launches, and
// it implements only a few ops, saying so for the rest.
type fakeDevice struct {
	launches map[OpKind]int
	uploads  int
}

type fakeBuffer struct {
	dev   *fakeDevice
	cells []float64
}

func (d *fakeDevice) Name() string { return "fake" }
func (d *fakeDevice) Alloc(n int) (Buffer, error) {
	if n > 1<<20 {
		return nil, errors.New("out of fake memory")
	}
	return &fakeBuffer{d, make([]float64, n)}, nil
}
func (b *fakeBuffer) Device() Device { return b.dev }
func (b *fakeBuffer) Len() int       { return len(b.cells) }
func (b *fakeBuffer) Read(dst []float32) error {
	for i, v := range b.cells {
		dst[i] = float32(v)
	}
	return nil
}
func (b *fakeBuffer) Write(src []float32) error {
	b.dev.uploads++
	for i, v := range src {
		b.cells[i] = float64(v)
	}
	return nil
}

func (b *fakeBuffer) Slice(offset, n int) (Buffer, error) {
	return &fakeBuffer{b.dev, b.cells[offset : offset+n]}, nil
}

func cells(t *Tensor) []float64 { return t.Buffer().(*fakeBuffer).cells }

func (d *fakeDevice) Exec(op Op, out *Tensor, in ...*Tensor) error {
	o := cells(out)
	switch op.Kind {
	case OpFill:
		for i := range o {
			o[i] = float64(op.Scalar)
		}
	case OpAdd: // same-shape only: a real backend may restrict itself too
		if !SameShape(in[0], in[1]) {
			return fmt.Errorf("broadcasting Add: %w", ErrUnsupported)
		}
		a, b := cells(in[0]), cells(in[1])
		for i := range o {
			o[i] = a[i] + b[i]
		}
	case OpMulScalar:
		for i, v := range cells(in[0]) {
			o[i] = v * float64(op.Scalar)
		}
	default:
		return fmt.Errorf("%v: %w", op.Kind, ErrUnsupported)
	}
	d.launches[op.Kind]++
	return nil
}

func TestFakeDeviceSeam(t *testing.T) {
	dev := &fakeDevice{launches: map[OpKind]int{}}
	a := FromSlice([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b := Full(0.5, 2, 3)
	da, err := a.ToDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := b.ToDevice(dev)
	if da.OnHost() || da.Device() != dev || dev.uploads != 2 {
		t.Fatalf("tensor not on the fake device (uploads %d)", dev.uploads)
	}
	sum := MulScalar(nil, Add(nil, da, db), 2) // result allocated on the device
	view := sum.Reshape(3, 2)                  // views keep the device storage
	if view.Device() != dev || dev.launches[OpAdd] != 1 || dev.launches[OpMulScalar] != 1 {
		t.Fatalf("ops did not run on the fake device: %v", dev.launches)
	}
	host, err := view.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if want := []float32{3, 5, 7, 9, 11, 13}; !slices.Equal(host.Data(), want) {
		t.Fatalf("got %v, want %v", host.Data(), want)
	}

	expectPanic := func(what, substr string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			if r == nil || !strings.Contains(fmt.Sprint(r), substr) {
				t.Errorf("%s: panic %v, want one mentioning %q", what, r, substr)
			}
		}()
		f()
	}
	// Device failures are error values carried by the result (device.go), never panics.
	expectErr := func(what, substr string, got *Tensor) *OpError {
		t.Helper()
		var oe *OpError
		if err := got.Err(); err == nil || !strings.Contains(err.Error(), substr) || !errors.As(err, &oe) {
			t.Errorf("%s: error %v, want an *OpError mentioning %q", what, err, substr)
		}
		if _, err := got.ToHost(); err != got.Err() {
			t.Errorf("%s: ToHost returned %v, want the carried error", what, err)
		}
		return oe
	}
	if oe := expectErr("unsupported op", `Exp on device "fake": Exp: op not supported`, Exp(nil, da)); oe != nil && !errors.Is(oe, ErrUnsupported) {
		t.Errorf("unsupported op: %v does not wrap ErrUnsupported", oe)
	}
	expectErr("unsupported variant", "broadcasting Add", Add(nil, da, Fill(New(dev, 3), 1)))
	mixed := Add(nil, da, b)
	expectErr("mixed devices", "move them to one device", mixed)
	// The first error flows through later ops, which do no device work.
	before := dev.launches[OpMulScalar]
	expectErr("propagated", "move them to one device", MulScalar(nil, Exp(nil, mixed), 3))
	if dev.launches[OpMulScalar] != before {
		t.Error("an op on a failed operand ran on the device")
	}
	expectPanic("reading a failed tensor", "move them to one device", func() { Exp(nil, Add(nil, a, da)).Data() })
	// A destination reused by a successful op is good again; one that an op accumulates into keeps its error.
	dst := Add(nil, da, b)
	if err := Add(dst, da, db).Err(); err != nil {
		t.Errorf("successful op into a failed destination: %v", err)
	}
	acc := Add(nil, da, b)
	if SliceAdd(acc, db, 0, 0).Err() == nil {
		t.Error("accumulating into a failed destination cleared its error")
	}
	expectPanic("host data of a device tensor", "call ToHost first", func() { da.Data() })
	if _, err := Zeros(2048, 1024).ToDevice(dev); err == nil || !strings.Contains(err.Error(), "out of fake memory") {
		t.Errorf("allocation failure not reported: %v", err)
	}
}
