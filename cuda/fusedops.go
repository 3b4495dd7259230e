package cuda

import (
	"fmt"

	"holdgo/rng"
	"holdgo/tensor"
)

// The fused families of the tensor op list (tensor/fused.go) on the device's kernels: Philox fill
// and dropout (kernels/philox.cu), group norm + SiLU + dropout (groupnorm.go), the time embeddings (timeembed.cu), the training step's
// reductions, clipped Adam and guarded EMA (train.cu), the HOLD reparameterisation (hold.cu) and
// the block-affine sampler steps (lietrotter.cu).

// partialSlots is the most blocks of gridFlat: the two-pass reductions' partial sums.
const partialSlots = 1024

// fusedOp runs one op of the fused families; o and ip are the addresses of out and in.
func (d *Device) fusedOp(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	switch op.Kind {
	case tensor.OpFillNormal:
		return d.fillNormal(out.Len(), op.Stream, op.First, o)
	case tensor.OpDropout:
		return d.dropout(out.Len(), op.Stream, op.Coef[0], op.First, ip[0], o)
	case tensor.OpGroupNormSiLUDropout, tensor.OpGroupNormSiLUDropoutBackward:
		return d.groupNorm(op, in[0], o, ip) // groupnorm.go
	case tensor.OpFourierEmbedding:
		return d.timeEmbed(out, in[0], in[1], 0, in[1].Len(), 0)
	case tensor.OpPositionalEmbedding:
		return d.PositionalEmbedding(out, in[0], out.Dim(1))
	case tensor.OpAdam:
		c := op.Coef
		return d.hgClipAdam(gridFlat(out.Len()), out.Len(), float32(c[0]), float32(c[1]), float32(c[2]), float32(c[3]),
			float32(c[4]), c[5], ip[3], o, ip[0], ip[1], ip[2])
	case tensor.OpEMA:
		return d.hgEmaGuard(gridFlat(out.Len()), out.Len(), float32(1-op.Coef[0]), ip[1], o, ip[0])
	case tensor.OpAddScaled:
		return d.hgAddScaled(grid1D(out.Len()), out.Len(), op.Scalar, ip[0], ip[1], o)
	case tensor.OpSumSq:
		return d.reduceInto(o, 1, 1, func(g [3]int, partial uintptr) error {
			return d.hgSumsq(g, in[0].Len(), ip[0], partial)
		}, in[0].Len())
	case tensor.OpScoreLoss:
		return d.reduceInto(ip[2], 0, 1/op.Coef[0], func(g [3]int, partial uintptr) error {
			return d.hgScoreLoss(g, out.Len(), int(op.Coef[0]), ip[0], ip[1], o, partial)
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
	return d.hgFinish(gridRows(1), g[0], partial.ptr, scale, stats, slot)
}

func (d *Device) fillNormal(n int, s rng.Stream, first uint64, p uintptr) error {
	if n == 0 {
		return nil
	}
	return d.hgPhiloxNormal(grid1D(n), n, first, s.Key, s.Step, s.ID, p)
}

func (d *Device) dropout(n int, s rng.Stream, p float64, first uint64, x, y uintptr) error {
	if !(p >= 0 && p < 1) {
		return fmt.Errorf("dropout probability %g outside [0, 1)", p)
	}
	if n == 0 {
		return nil
	}
	return d.hgDropout(grid1D(n), n, first, s.Key, s.Step, s.ID, float32(p), rng.DropoutKeep(p), x, y)
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
		return d.hgLtB(g, batch, n, dim, coef.ptr, ip[0], px)
	case score:
		z2 := ip[len(ip)-1]
		return d.hgLtStep(g, batch, n, dim, op.Halves, coef.ptr, ip[0], ip[1], z2, px)
	}
	for half := range op.Halves {
		if err := d.hgLtA(g, batch, n, dim, half, coef.ptr, ip[half], px); err != nil {
			return err
		}
	}
	return nil
}
