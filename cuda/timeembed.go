package cuda

import (
	"fmt"
	"math"

	"holdgo/tensor"
)

// FourierEmbedding sets out (B, 2·len(w)) to layers.FourierEmbedding of the times t (B) with the
// Fourier weights w, on the device (kernels/timeembed.cu).
func (d *Device) FourierEmbedding(out, t, w *tensor.Tensor) error {
	return d.timeEmbed(out, t, w, 0, w.Len(), 0)
}

// PositionalEmbedding sets out (B, dim) to layers.PositionalEmbedding of the times t (B).
func (d *Device) PositionalEmbedding(out, t *tensor.Tensor, dim int) error {
	half := dim / 2
	return d.timeEmbed(out, t, t, 1, half, math.Log(10000)/float64(max(half-1, 1)))
}

func (d *Device) timeEmbed(out, t, w *tensor.Tensor, mode, half int, scale float64) error {
	if err := checkShape("time embedding", out, t.Len(), 2*half); err != nil {
		return err
	}
	p, err := d.ptrs(out, t, w)
	if err != nil {
		return fmt.Errorf("cuda: time embedding: %w", err)
	}
	if out.Len() == 0 {
		return nil
	}
	return d.hgTimeEmbed(grid1D(t.Len()*half), t.Len(), half, mode, scale, p[1], p[2], p[0])
}
