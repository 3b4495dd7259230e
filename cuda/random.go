package cuda

import (
	"fmt"

	"holdgo/rng"
	"holdgo/tensor"
)

// Random numbers on the device (kernels/philox.cu): the twins of rng.Stream's fills, bit-identical
// to them, and the fused dropout whose mask is regenerated from its counters instead of uploaded.

func (a *args) u32(v uint32) *args { a.slots = append(a.slots, uint64(v)); return a }

func (a *args) u64(v uint64) *args { a.slots = append(a.slots, v); return a }

// FillNormal sets dst to the standard normal draws of s (rng.Stream.FillNormal; tensor.FillNormal).
func (d *Device) FillNormal(dst *tensor.Tensor, s rng.Stream) error {
	p, err := d.ptrOf(dst)
	if err != nil {
		return err
	}
	return d.fillNormal(dst.Len(), s, 0, p)
}

// FillUniform sets dst to the uniform draws of s in [0, 1) (rng.Stream.FillUniform).
func (d *Device) FillUniform(dst *tensor.Tensor, s rng.Stream) error {
	p, err := d.ptrOf(dst)
	if err != nil || dst.Len() == 0 {
		return err
	}
	return d.hgPhiloxUniform(grid1D(dst.Len()), dst.Len(), s.Key, s.Step, s.ID, p)
}

// Dropout sets y = x·mask with mask_j = 1/(1−p) where uniform j of s is ≥ p, else 0
// (rng.Stream.Dropout); y may be x.
func (d *Device) Dropout(y, x *tensor.Tensor, s rng.Stream, p float64) error {
	return d.DropoutFrom(y, x, s, p, 0)
}

// DropoutFrom is Dropout with the mask elements first, first+1, … of s (rng.Stream.DropoutFrom;
// tensor.Dropout): x is the part of a longer tensor that starts at element first (a data-parallel
// rank's samples of the global batch).
func (d *Device) DropoutFrom(y, x *tensor.Tensor, s rng.Stream, p float64, first uint64) error {
	if err := sameLen("dropout", x, y); err != nil {
		return err
	}
	ps, err := d.ptrs(x, y)
	if err != nil {
		return err
	}
	return d.dropout(x.Len(), s, p, first, ps[0], ps[1])
}

// View returns a tensor of the given shape that aliases t's device memory from element offset on
// (tensor.View).
func (d *Device) View(t *tensor.Tensor, offset int, shape ...int) (*tensor.Tensor, error) {
	if t.Device() != tensor.Device(d) {
		return nil, fmt.Errorf("cuda: view of a tensor that is not on device %s", d.name)
	}
	return tensor.View(t, offset, shape...)
}
