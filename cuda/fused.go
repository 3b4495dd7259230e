package cuda

import (
	"fmt"

	"holdgo/tensor"
)

// Shape checks and the im2col geometry and launches that the op path (conv.go, timeembed.go,
// random.go) shares.

func checkShape(what string, t *tensor.Tensor, shape ...int) error {
	s := t.Shape()
	if len(s) != len(shape) {
		return fmt.Errorf("cuda: %s: shape %v, want %v", what, s, shape)
	}
	for i := range s {
		if s[i] != shape[i] {
			return fmt.Errorf("cuda: %s: shape %v, want %v", what, s, shape)
		}
	}
	return nil
}

// lastAxis splits a tensor of rank ≥ 1 into rows × cols over its last axis.
func lastAxis(t *tensor.Tensor) (rows, cols int) {
	if t.Rank() == 0 {
		return 1, 1
	}
	cols = t.Dim(-1)
	if cols == 0 {
		return 0, 0
	}
	return t.Len() / cols, cols
}

// Conv2D is the geometry of a 2-D convolution's im2col.
type Conv2D struct {
	KH, KW           int
	PadH, PadW       int
	StrideH, StrideW int // 0 means 1
	DilH, DilW       int // 0 means 1
}

func (c Conv2D) norm() Conv2D {
	c.StrideH, c.StrideW, c.DilH, c.DilW = max(c.StrideH, 1), max(c.StrideW, 1), max(c.DilH, 1), max(c.DilW, 1)
	return c
}

// im2colLaunch unfolds n images at x into col, element (sample i, row r, column p) at
// col[i·sn + r·sr + p] (kernels/im2col.cu).
func (d *Device) im2colLaunch(c Conv2D, n, ch, h, w, oh, ow, sn, sr int, x, col uintptr) error {
	total := n * ch * c.KH * c.KW * oh * ow
	if total == 0 {
		return nil
	}
	return d.hgIm2col(grid1D(total), n, ch, h, w, c.KH, c.KW, c.PadH, c.PadW, c.StrideH, c.StrideW, c.DilH, c.DilW, oh, ow,
		sn, sr, x, col)
}

// col2imLaunch sets x = col2im(col) + beta·x for n images in the per-sample layout.
func (d *Device) col2imLaunch(c Conv2D, n, ch, h, w, oh, ow int, beta float32, col, x uintptr) error {
	if n*ch*h*w == 0 {
		return nil
	}
	return d.hgCol2im(grid1D(n*ch*h*w), n, ch, h, w, c.KH, c.KW, c.PadH, c.PadW, c.StrideH, c.StrideW, c.DilH, c.DilW, oh, ow,
		beta, col, x)
}

func sameLen(what string, ts ...*tensor.Tensor) error {
	for _, t := range ts[1:] {
		if t.Len() != ts[0].Len() {
			return fmt.Errorf("cuda: %s: buffers of %d and %d elements", what, ts[0].Len(), t.Len())
		}
	}
	return nil
}
