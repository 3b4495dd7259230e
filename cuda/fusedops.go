package cuda

import (
	"fmt"

	"holdgo/rng"
	"holdgo/tensor"
)

// The fused families of the tensor op list (tensor/fused.go) on the device's kernels: Philox fill
// and dropout (kernels/philox.cu), the time embeddings (timeembed.cu), the training step's
// reductions, clipped Adam and guarded EMA (train.cu), the HOLD reparameterisation (hold.cu) and
// the block-affine sampler steps (lietrotter.cu).

// partialSlots is the most blocks of gridFlat: the two-pass reductions' partial sums.
const partialSlots = 1024

// fusedOp runs one op of the fused families; o and ip are the addresses of out and in.
func (d *Device) fusedOp(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	switch op.Kind {
	case tensor.OpFillNormal:
		return d.fillNormal(out.Len(), op.Stream, o)
	case tensor.OpDropout:
		return d.dropout(out.Len(), op.Stream, op.Coef[0], op.First, ip[0], o)
	case tensor.OpFourierEmbedding:
		return d.timeEmbed(out, in[0], in[1], 0, in[1].Len(), 0)
	case tensor.OpPositionalEmbedding:
		return d.PositionalEmbedding(out, in[0], out.Dim(1))
	case tensor.OpAdam:
		c := op.Coef
		return d.launch("hg_clip_adam", gridFlat(out.Len()), new(args).i32(out.Len()).f32(float32(c[0])).f32(float32(c[1])).
			f32(float32(c[2])).f32(float32(c[3])).f32(float32(c[4])).f64(c[5]).ptr64(ip[3]).ptr(o).ptr(ip[0]).ptr(ip[1]).ptr(ip[2]))
	case tensor.OpEMA:
		return d.launch("hg_ema_guard", gridFlat(out.Len()), new(args).i32(out.Len()).f32(float32(1-op.Coef[0])).
			ptr64(ip[1]).ptr(o).ptr(ip[0]))
	case tensor.OpSumSq:
		return d.reduceInto(o, 1, 1, func(g [3]int, partial uintptr) error {
			return d.launch("hg_sumsq", g, new(args).i32(in[0].Len()).ptr(ip[0]).ptr64(partial))
		}, in[0].Len())
	case tensor.OpScoreLoss:
		return d.reduceInto(ip[2], 0, 1/op.Coef[0], func(g [3]int, partial uintptr) error {
			return d.launch("hg_score_loss", g, new(args).i32(out.Len()).i32(int(op.Coef[0])).ptr(ip[0]).ptr(ip[1]).ptr(o).ptr(partial))
		}, out.Len())
	case tensor.OpPerturb:
		var aux *tensor.Tensor
		if len(in) > 4 {
			aux = in[4]
		}
		return d.perturb(in[1].Dim(0), op.Blocks, in[1].Dim(1), ip[0], in[1], in[2], aux, out, in[3])
	case tensor.OpBlockAffine:
		return d.blockAffine(op, out, o, ip)
	}
	return tensor.ErrUnsupported
}

// reduceInto runs a two-pass reduction: first(grid, partial) writes one float64 per block of
// gridFlat(n) into scratch memory, then hg_finish sets the float64 at slot of stats to scale·Σ.
func (d *Device) reduceInto(stats uintptr, slot int, scale float64, first func(g [3]int, partial uintptr) error, n int) error {
	partial, err := d.scratch(8 * partialSlots)
	if err != nil {
		return err
	}
	defer d.release(partial)
	g := gridFlat(n)
	if err := first(g, partial.ptr); err != nil {
		return err
	}
	return d.launch("hg_finish", gridRows(1), new(args).i32(g[0]).ptr64(partial.ptr).f64(scale).ptr64(stats).i32(slot))
}

func (d *Device) fillNormal(n int, s rng.Stream, p uintptr) error {
	if n == 0 {
		return nil
	}
	return d.launch("hg_philox_normal", grid1D((n+1)/2), new(args).i64(n).stream(s).ptr(p))
}

func (d *Device) dropout(n int, s rng.Stream, p float64, first uint64, x, y uintptr) error {
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("dropout probability %g outside [0, 1)", p)
	}
	if n == 0 {
		return nil
	}
	return d.launch("hg_dropout", grid1D(n), new(args).i64(n).u64(first).stream(s).f32(float32(p)).
		f32(rng.DropoutKeep(p)).ptr(x).ptr(y))
}

// blockAffine runs OpBlockAffine: hg_lt_step for a B update followed by A-halves, hg_lt_b for a B
// update alone, hg_lt_a per A-half without one. The coefficients go up in one copy.
func (d *Device) blockAffine(op tensor.Op, x *tensor.Tensor, px uintptr, ip []uintptr) error {
	n := op.Blocks
	batch, dim := x.Dim(0), x.Dim(1)/n
	if batch*dim == 0 {
		return nil
	}
	coef, err := upload(d, op.Coef)
	if err != nil {
		return err
	}
	defer d.release(coef)
	g := grid1D(batch * dim)
	score := len(ip) > op.Halves
	switch {
	case score && op.Halves == 0:
		return d.launch("hg_lt_b", g, new(args).i32(batch).i32(n).i32(dim).ptr64(coef.ptr).ptr(ip[0]).ptr(px))
	case score:
		z2 := ip[len(ip)-1]
		return d.launch("hg_lt_step", g, new(args).i32(batch).i32(n).i32(dim).i32(op.Halves).
			ptr(coef.ptr).ptr(ip[0]).ptr(ip[1]).ptr(z2).ptr(px))
	}
	for half := range op.Halves {
		if err := d.launch("hg_lt_a", g, new(args).i32(batch).i32(n).i32(dim).i32(half).ptr64(coef.ptr).ptr(ip[half]).ptr(px)); err != nil {
			return err
		}
	}
	return nil
}
