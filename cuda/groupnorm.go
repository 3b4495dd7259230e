package cuda

import (
	"fmt"

	"holdgo/rng"
	"holdgo/tensor"
)

// Group normalisation on the kernels of kernels/groupnorm.cu: one block per (sample, group), the
// group kept in dynamic shared memory where it fits (groupCache).

// groupShape returns N, C and the spatial size of a group-norm input.
func groupShape(x *tensor.Tensor) (n, c, spatial int) {
	n, c = x.Dim(0), x.Dim(1)
	return n, c, x.Len() / max(n*c, 1)
}

// groupCache is what a group-norm kernel keeps of a group of size floats in dynamic shared memory
// (its cache argument) and the bytes that takes: arrays is how many group-sized arrays it would
// like (1: x; 2: x and dy, the backward's), and it gets as many as fit maxDynamicShared, x first.
func groupCache(size, arrays int) (cache, shared int) {
	for k := arrays; k > 0; k-- {
		if 4*k*size <= maxDynamicShared {
			return k, 4 * k * size
		}
	}
	return 0, 0
}

// groupNorm runs OpGroupNorm, OpGroupNormSiLU, OpGroupNormSiLUDropout and their backward ops (in =
// x, γ, β or dy, …). The forward ops are one launch; the backward ops two: hg_group_norm_backward
// (hg_group_norm_silu_dropout_backward) writes dx and the (sample, channel) partials of dγ and dβ
// to scratch memory, hg_group_norm_param_sum adds their ordered batch sums into dγ and dβ (in3,
// in4; in4, in5 for the SiLU ops). The dropout ops (a fused family: fusedOp sends them here) draw
// the mask of op.Stream from element op.First with probability op.Coef[0] in the kernels.
func (d *Device) groupNorm(op tensor.Op, x *tensor.Tensor, o uintptr, ip []uintptr) error {
	drop := op.Kind == tensor.OpGroupNormSiLUDropout || op.Kind == tensor.OpGroupNormSiLUDropoutBackward
	var p float64
	if drop {
		if p = op.Coef[0]; !(p >= 0 && p < 1) {
			return fmt.Errorf("dropout probability %g outside [0, 1)", p)
		}
	}
	n, c, spatial := groupShape(x)
	if x.Len() == 0 { // nothing to write; dγ and dβ get 0 added
		return nil
	}
	ng, size := n*op.Groups, c/op.Groups*spatial
	s, pf, scale := op.Stream, float32(p), rng.DropoutKeep(p)
	switch op.Kind {
	case tensor.OpGroupNorm:
		stats, err := d.scratch(2 * 4 * ng) // the saved mean and rstd, unused: the backward recomputes them
		if err != nil {
			return err
		}
		defer d.release(stats)
		cache, shared := groupCache(size, 1)
		return d.hgGroupNorm(gridRows(ng), shared, n, c, spatial, op.Groups, op.Scalar, cache, ip[0], ip[1], ip[2], o,
			stats.ptr, stats.ptr+uintptr(4*ng))
	case tensor.OpGroupNormSiLU:
		cache, shared := groupCache(size, 1)
		return d.hgGroupNormSilu(gridRows(ng), shared, n, c, spatial, op.Groups, op.Scalar, cache, ip[0], ip[1], ip[2], o)
	case tensor.OpGroupNormSiLUDropout:
		cache, shared := groupCache(size, 1)
		return d.hgGroupNormSiluDropout(gridRows(ng), shared, n, c, spatial, op.Groups, op.Scalar, cache,
			op.First, s.Key, s.Step, s.ID, pf, scale, ip[0], ip[1], ip[2], o)
	}
	silu, shift, dy, grads := 0, ip[1], ip[2], ip[3:] // shift: not read by the plain backward
	if op.Kind != tensor.OpGroupNormBackward {
		silu, shift, dy, grads = 1, ip[2], ip[3], ip[4:]
	}
	partial, err := d.scratch(2 * 4 * n * c)
	if err != nil {
		return err
	}
	defer d.release(partial)
	cache, shared := groupCache(size, 2)
	if drop {
		err = d.hgGroupNormSiluDropoutBackward(gridRows(ng), shared, n, c, spatial, op.Groups, op.Scalar, op.Beta, cache,
			op.First, s.Key, s.Step, s.ID, pf, scale, ip[0], ip[1], shift, dy, o, partial.ptr)
	} else {
		err = d.hgGroupNormBackward(gridRows(ng), shared, n, c, spatial, op.Groups, op.Scalar, silu, op.Beta, cache,
			ip[0], ip[1], shift, dy, o, partial.ptr)
	}
	if err != nil {
		return err
	}
	return d.hgGroupNormParamSum(grid1D(c), n, c, partial.ptr, grads[0], grads[1])
}
