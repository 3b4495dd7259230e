package cuda

import (
	"fmt"

	"holdgo/tensor"
)

// The HOLD families (kernels/hold.cu, kernels/lietrotter.cu) behind tensor.OpPerturb and
// tensor.OpBlockAffine (fusedops.go). Coefficients are computed on the host in float64 by package
// hold and passed in; the kernels apply them in float64.

// perturb launches hg_hold_perturb with the coefficients at device address coef.
func (d *Device) perturb(batch, n, dim int, coef uintptr, q0, eps, aux, x, target *tensor.Tensor) error {
	ts := []*tensor.Tensor{q0, eps, x, target}
	if aux != nil {
		ts = append(ts, aux)
	}
	p, err := d.ptrs(ts...)
	if err != nil {
		return err
	}
	var pAux uintptr
	if aux != nil {
		pAux = p[4]
	}
	if dim == 0 || batch == 0 {
		return nil
	}
	return d.hgHoldPerturb(grid1D(batch*dim), batch, n, dim, coef, p[0], p[1], pAux, p[2], p[3])
}

// LieTrotterUnfused runs the step a of tensor.BlockStep (a score and a.Halves ≥ 1 noises) as
// separate B and A launches (the state makes three round trips through memory); the kernel
// benchmarks compare it with the fused op.
func (d *Device) LieTrotterUnfused(x, score *tensor.Tensor, z []*tensor.Tensor, a tensor.BlockAffine) error {
	if a.Halves < 1 || len(z) != a.Halves || x.Rank() != 2 || a.Blocks < 1 || x.Dim(1)%a.Blocks != 0 {
		return fmt.Errorf("cuda: Lie–Trotter step: state %v, %d blocks, %d halves, %d noises", x.Shape(), a.Blocks, a.Halves, len(z))
	}
	b := a
	b.Halves = 0
	if err := tensor.Err(tensor.BlockStep(x, score, nil, b)); err != nil {
		return err
	}
	for k := range a.Halves {
		h := tensor.BlockAffine{Blocks: a.Blocks, A: [2]tensor.BlockMap{a.A[k]}, Halves: 1}
		if err := tensor.Err(tensor.BlockStep(x, nil, z[k:k+1], h)); err != nil {
			return err
		}
	}
	return nil
}
