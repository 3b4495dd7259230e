package cuda

import (
	"fmt"
	"math"
	"runtime"

	"holdgo/rng"
	"holdgo/tensor"
)

// Random numbers on the device (kernels/philox.cu): the twins of rng.Stream's fills, bit-identical
// to them, and the fused dropout whose mask is regenerated from its counters instead of uploaded.

func (a *args) u32(v uint32) *args { a.slots = append(a.slots, uint64(v)); return a }

func (a *args) u64(v uint64) *args { a.slots = append(a.slots, v); return a }

func (a *args) stream(s rng.Stream) *args {
	a.slots = append(a.slots, s.Key)
	return a.u32(s.Step).u32(s.ID)
}

// FillNormal sets dst to the standard normal draws of s (rng.Stream.FillNormal).
func (d *Device) FillNormal(dst *tensor.Tensor, s rng.Stream) error {
	p, err := d.ptrOf(dst)
	if err != nil || dst.Len() == 0 {
		return err
	}
	return d.launch("hg_philox_normal", grid1D((dst.Len()+1)/2), new(args).i64(dst.Len()).stream(s).ptr(p))
}

// FillUniform sets dst to the uniform draws of s in [0, 1) (rng.Stream.FillUniform).
func (d *Device) FillUniform(dst *tensor.Tensor, s rng.Stream) error {
	p, err := d.ptrOf(dst)
	if err != nil || dst.Len() == 0 {
		return err
	}
	return d.launch("hg_philox_uniform", grid1D(dst.Len()), new(args).i64(dst.Len()).stream(s).ptr(p))
}

// Dropout sets y = x·mask with mask_j = 1/(1−p) where uniform j of s is ≥ p, else 0
// (rng.Stream.Dropout); y may be x.
func (d *Device) Dropout(y, x *tensor.Tensor, s rng.Stream, p float64) error {
	return d.DropoutFrom(y, x, s, p, 0)
}

// DropoutFrom is Dropout with the mask elements first, first+1, … of s (rng.Stream.DropoutFrom):
// x is the part of a longer tensor that starts at element first (a data-parallel rank's samples
// of the global batch).
func (d *Device) DropoutFrom(y, x *tensor.Tensor, s rng.Stream, p float64, first uint64) error {
	if err := sameLen("dropout", x, y); err != nil {
		return err
	}
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("cuda: dropout probability %g outside [0, 1)", p)
	}
	ps, err := d.ptrs(x, y)
	if err != nil || x.Len() == 0 {
		return err
	}
	return d.launch("hg_dropout", grid1D(x.Len()), new(args).i64(x.Len()).u64(first).stream(s).f32(float32(p)).
		f32(rng.DropoutKeep(p)).ptr(ps[0]).ptr(ps[1]))
}

// View returns a tensor of the given shape that aliases t's device memory from element offset on
// (a parameter inside a model's flat buffer). It keeps t's memory alive as long as it is
// reachable itself.
func (d *Device) View(t *tensor.Tensor, offset int, shape ...int) (*tensor.Tensor, error) {
	parent, ok := t.Buffer().(*buffer)
	if !ok || parent.dev != d {
		return nil, fmt.Errorf("cuda: view of a tensor that is not on device %s", d.name)
	}
	n := 1
	for _, v := range shape {
		n *= v
	}
	if offset < 0 || n < 0 || offset+n > parent.n {
		return nil, fmt.Errorf("cuda: view of %d elements at %d in a buffer of %d", n, offset, parent.n)
	}
	v := &buffer{dev: d, ptr: parent.ptr + uintptr(4*offset), n: n}
	runtime.AddCleanup(v, func(p *buffer) { runtime.KeepAlive(p) }, parent)
	return tensor.New(viewer{d, v}, shape...), nil
}

// viewer is a tensor.Device whose Alloc hands out one prepared buffer: tensor.New wraps it in a
// Tensor (the buffer reports d as its device, so the tensor lives on d).
type viewer struct {
	*Device
	next *buffer
}

func (v viewer) Alloc(int) (tensor.Buffer, error) { return v.next, nil }

// float64Slots is the number of float32 elements that hold n float64 values.
func float64Slots(n int) int { return 2 * n }

// putFloat64s stores v in dst as float64 bit patterns (two float32 slots each, little-endian), so
// that float64 coefficients travel in the same upload as float32 data.
func putFloat64s(dst []float32, v []float64) {
	for i, x := range v {
		b := math.Float64bits(x)
		dst[2*i] = math.Float32frombits(uint32(b))
		dst[2*i+1] = math.Float32frombits(uint32(b >> 32))
	}
}
