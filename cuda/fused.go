package cuda

import (
	"fmt"
	"math"

	"holdgo/tensor"
)

// The kernel families beyond the tensor op list. Each method checks shapes, returns an error
// instead of panicking, and issues one launch (two for the unfused Lie–Trotter sequence).

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

// Softmax sets y = softmax(x) over the last axis (y and x of one shape).
func (d *Device) Softmax(y, x *tensor.Tensor) error {
	if !tensor.SameShape(x, y) {
		return fmt.Errorf("cuda: softmax: shapes %v and %v differ", x.Shape(), y.Shape())
	}
	p, err := d.ptrs(x, y)
	if err != nil {
		return err
	}
	rows, cols := lastAxis(x)
	if rows == 0 {
		return nil
	}
	return d.hgSoftmaxFwd(gridRows(rows), rows, cols, 1, p[0], p[1])
}

// SoftmaxBackward sets dx = y ⊙ (dy − Σ_last dy ⊙ y) for y = softmax(x).
func (d *Device) SoftmaxBackward(dx, y, dy *tensor.Tensor) error {
	if !tensor.SameShape(y, dy) || !tensor.SameShape(y, dx) {
		return fmt.Errorf("cuda: softmax backward: shapes %v, %v, %v differ", dx.Shape(), y.Shape(), dy.Shape())
	}
	p, err := d.ptrs(y, dy, dx)
	if err != nil {
		return err
	}
	rows, cols := lastAxis(y)
	if rows == 0 {
		return nil
	}
	return d.hgSoftmaxBwd(gridRows(rows), rows, cols, 1, p[0], p[1], p[2])
}

// GroupNorm normalises x of shape (N, C, spatial…) over groups of C/groups channels:
// y = (x − mean)·rstd·gamma[c] + beta[c], saving mean and rstd (N, groups) for the backward pass.
func (d *Device) GroupNorm(y, mean, rstd, x, gamma, beta *tensor.Tensor, groups int, eps float32) error {
	if x.Rank() < 2 {
		return fmt.Errorf("cuda: group norm: input rank %d, want ≥ 2", x.Rank())
	}
	n, c := x.Dim(0), x.Dim(1)
	if groups <= 0 || c%groups != 0 {
		return fmt.Errorf("cuda: group norm: %d channels in %d groups", c, groups)
	}
	spatial := 1
	for _, v := range x.Shape()[2:] {
		spatial *= v
	}
	for _, e := range []error{checkShape("group norm y", y, x.Shape()...), checkShape("group norm gamma", gamma, c),
		checkShape("group norm beta", beta, c), checkShape("group norm mean", mean, n, groups),
		checkShape("group norm rstd", rstd, n, groups)} {
		if e != nil {
			return e
		}
	}
	p, err := d.ptrs(x, gamma, beta, y, mean, rstd)
	if err != nil {
		return err
	}
	if n == 0 || spatial == 0 {
		return nil
	}
	return d.hgGroupNorm(gridRows(n*groups), n, c, spatial, groups, eps, p[0], p[1], p[2], p[3], p[4], p[5])
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

// OutSize is the output height and width for an h×w input.
func (c Conv2D) OutSize(h, w int) (oh, ow int) {
	c = c.norm()
	oh = (h+2*c.PadH-c.DilH*(c.KH-1)-1)/c.StrideH + 1
	ow = (w+2*c.PadW-c.DilW*(c.KW-1)-1)/c.StrideW + 1
	return
}

func (d *Device) im2col(name string, x, col *tensor.Tensor, c Conv2D) error {
	c = c.norm()
	if x.Rank() != 4 {
		return fmt.Errorf("cuda: %s: image rank %d, want 4 (N, C, H, W)", name, x.Rank())
	}
	n, ch, h, w := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	oh, ow := c.OutSize(h, w)
	if oh <= 0 || ow <= 0 {
		return fmt.Errorf("cuda: %s: kernel %d×%d does not fit a %d×%d image", name, c.KH, c.KW, h, w)
	}
	if err := checkShape(name+" columns", col, n, ch*c.KH*c.KW, oh*ow); err != nil {
		return err
	}
	p, err := d.ptrs(x, col)
	if err != nil {
		return err
	}
	if name == "hg_im2col" {
		rows := ch * c.KH * c.KW
		return d.im2colLaunch(c, n, ch, h, w, oh, ow, rows*oh*ow, oh*ow, p[0], p[1])
	}
	return d.col2imLaunch(c, n, ch, h, w, oh, ow, 0, p[1], p[0])
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

// Im2Col unfolds x (N, C, H, W) into col (N, C·KH·KW, OH·OW).
func (d *Device) Im2Col(col, x *tensor.Tensor, c Conv2D) error {
	return d.im2col("hg_im2col", x, col, c)
}

// Col2Im folds col back into x, summing overlapping patches (the adjoint of Im2Col); x is
// overwritten.
func (d *Device) Col2Im(x, col *tensor.Tensor, c Conv2D) error {
	return d.im2col("hg_col2im", x, col, c)
}

// FIR is an upfirdn2d configuration (kernels/fir.cu): upsample, pad, convolve, downsample.
type FIR struct {
	Up, Down   int // 0 means 1
	Pad0, Pad1 int // padding before and after, both axes
}

// OutSize is the output size along an axis of size h for a filter of size k.
func (f FIR) OutSize(h, k int) int {
	up, down := max(f.Up, 1), max(f.Down, 1)
	return (h*up+f.Pad0+f.Pad1-k)/down + 1
}

// UpFirDn2D filters every plane of x (…, H, W) with k (KH, KW) into y (…, OH, OW).
func (d *Device) UpFirDn2D(y, x, k *tensor.Tensor, f FIR) error {
	if x.Rank() < 2 || k.Rank() != 2 || y.Rank() != x.Rank() {
		return fmt.Errorf("cuda: upfirdn2d: shapes %v, %v, %v", y.Shape(), x.Shape(), k.Shape())
	}
	if f.Pad0 < 0 || f.Pad1 < 0 {
		return fmt.Errorf("cuda: upfirdn2d: negative padding: %w", tensor.ErrUnsupported)
	}
	h, w, kh, kw := x.Dim(-2), x.Dim(-1), k.Dim(0), k.Dim(1)
	oh, ow := f.OutSize(h, kh), f.OutSize(w, kw)
	shape := append(append([]int(nil), x.Shape()[:x.Rank()-2]...), oh, ow)
	if err := checkShape("upfirdn2d output", y, shape...); err != nil {
		return err
	}
	p, err := d.ptrs(k, x, y)
	if err != nil {
		return err
	}
	if y.Len() == 0 {
		return nil
	}
	planes := y.Len() / (oh * ow)
	return d.hgUpfirdn2d(grid1D(y.Len()), planes, h, w, max(f.Up, 1), max(f.Down, 1), f.Pad0, f.Pad1, kh, kw, oh, ow,
		p[0], p[1], p[2])
}

func sameLen(what string, ts ...*tensor.Tensor) error {
	for _, t := range ts[1:] {
		if t.Len() != ts[0].Len() {
			return fmt.Errorf("cuda: %s: buffers of %d and %d elements", what, ts[0].Len(), t.Len())
		}
	}
	return nil
}

// Adam applies one optim.Adam step (step counts from 1) to the flat buffers params, m and v
// given grads, with the same float32 arithmetic as optim.Adam.Update.
func (d *Device) Adam(params, grads, m, v *tensor.Tensor, beta1, beta2, eps, lr float64, step int) error {
	if err := sameLen("adam", params, grads, m, v); err != nil {
		return err
	}
	p, err := d.ptrs(params, grads, m, v)
	if err != nil {
		return err
	}
	n := params.Len()
	if n == 0 {
		return nil
	}
	bc1 := 1 - math.Pow(beta1, float64(step))
	bc2 := 1 - math.Pow(beta2, float64(step))
	return d.hgAdam(grid1D(n), n, float32(beta1), float32(beta2), float32(eps), float32(lr/bc1), float32(math.Sqrt(bc2)),
		p[0], p[1], p[2], p[3])
}

// EMA moves shadow towards params: shadow −= (1 − decay)·(shadow − params).
func (d *Device) EMA(shadow, params *tensor.Tensor, decay float64) error {
	if err := sameLen("ema", shadow, params); err != nil {
		return err
	}
	p, err := d.ptrs(shadow, params)
	if err != nil {
		return err
	}
	n := shadow.Len()
	if n == 0 {
		return nil
	}
	return d.hgEma(grid1D(n), n, float32(1-decay), p[0], p[1])
}
