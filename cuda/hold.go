package cuda

import (
	"fmt"

	"holdgo/hold"
	"holdgo/tensor"
)

// The HOLD families: the fused reparameterisation (kernels/hold.cu) and the fused Lie–Trotter
// sampler step (kernels/lietrotter.cu). Coefficients are computed on the host in float64 by
// package hold (PerturbMaps, BCoefficients, AStep: each formula in one place) and passed to the
// kernels, which apply them in float64.

// PerturbCoefficients returns the 32 float64 coefficients per sample that hg_hold_perturb reads:
// hold.SDE.PerturbMaps at each time (the mean map M, its auxiliary columns scaled for DSM, and the
// Cholesky factor C), both 4×4 row-major.
func PerturbCoefficients(sde *hold.SDE, times []float64) []float64 {
	coef := make([]float64, 32*len(times))
	for b, t := range times {
		putPerturbCoefficients(coef[32*b:32*b+32], sde, t)
	}
	return coef
}

func putPerturbCoefficients(c []float64, sde *hold.SDE, t float64) {
	m, l := sde.PerturbMaps(t)
	for r := range hold.MaxBlocks {
		for j := range hold.MaxBlocks {
			c[4*r+j], c[16+4*r+j] = m[r][j], l[r][j]
		}
	}
}

// Perturb is the GPU twin of hold.SDE.Perturb: for B samples of d dimensions it writes
// x (B, n·d) = Mean·x0 + Chol·eps and target (B, d) = −eps_last in one pass. q0 is (B, d), eps is
// (B, n·d); aux is (B, (n−1)·d) for the DSM objective and nil otherwise.
func (d *Device) Perturb(sde *hold.SDE, times []float64, q0, eps, aux, x, target *tensor.Tensor) error {
	batch, n := len(times), sde.Blocks()
	if batch == 0 {
		return nil
	}
	if q0.Rank() != 2 || q0.Dim(0) != batch {
		return fmt.Errorf("cuda: perturb: data %v for %d times", q0.Shape(), batch)
	}
	dsm := sde.Config().Objective == hold.ObjectiveDSM && n > 1
	if dsm != (aux != nil) {
		return fmt.Errorf("cuda: perturb: auxiliary noise must be given exactly for DSM with n > 1")
	}
	coef, err := upload(d, PerturbCoefficients(sde, times))
	if err != nil {
		return err
	}
	defer d.release(coef)
	return d.perturb(batch, n, q0.Dim(1), coef.ptr, q0, eps, aux, x, target)
}

// perturb launches hg_hold_perturb with the coefficients at device address coef.
func (d *Device) perturb(batch, n, dim int, coef uintptr, q0, eps, aux, x, target *tensor.Tensor) error {
	for _, e := range []error{checkShape("perturb data", q0, batch, dim), checkShape("perturb noise", eps, batch, n*dim),
		checkShape("perturb state", x, batch, n*dim), checkShape("perturb target", target, batch, dim)} {
		if e != nil {
			return e
		}
	}
	ts := []*tensor.Tensor{q0, eps, x, target}
	if aux != nil {
		if err := checkShape("perturb aux", aux, batch, (n-1)*dim); err != nil {
			return err
		}
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
	return d.launch("hg_hold_perturb", grid1D(batch*dim), new(args).i32(batch).i32(n).i32(dim).ptr64(coef).
		ptr(p[0]).ptr(p[1]).ptr(pAux).ptr(p[2]).ptr(p[3]))
}

// LTStep holds the coefficients of one fused Lie–Trotter step (kernels/lietrotter.cu): the B
// update of the last block s ← BScale·s + BScore·S_θ (S_θ the network output), then the closing
// A half A1 and, when Halves is 2, the opening A half A2 of the next step.
type LTStep struct {
	N              int
	BScale, BScore float64
	A1, A2         hold.Step
	Halves         int
}

// NewLTStep builds the step that follows the score evaluation of the reverse step from t to
// t − h: B over (t, h) with the score ℓ·S_θ (Euler as hold.SDE.BStep, or exact as BStepExact),
// the closing half A(t − h/2, h/2) and, if hNext > 0, the next step's opening half
// A(t − h, hNext/2). The B coefficients are hold.SDE.BCoefficients: s ← scale·s + c·ℓ·S_θ.
func NewLTStep(sde *hold.SDE, t, h, hNext, ell float64, exact bool) (LTStep, error) {
	n := sde.Blocks()
	scale, c := sde.BCoefficients(t, h, exact)
	st := LTStep{N: n, BScale: scale, BScore: c * ell, A1: sde.AStep(t-h/2, h/2), Halves: 1}
	if hNext > 0 {
		st.A2, st.Halves = sde.AStep(t-h, hNext/2), 2
	}
	return st, nil
}

// coefficients lays the step out as hg_lt_step reads it (66 doubles).
func (st LTStep) coefficients() []float64 {
	c := make([]float64, 66)
	put := func(off int, m *hold.Matrix, lower bool) {
		for r := 0; r < st.N; r++ {
			for j := 0; j < st.N; j++ {
				if !lower || j <= r {
					c[off+4*r+j] = m.At(r, j)
				}
			}
		}
	}
	put(0, &st.A1.ExpA, false)
	put(16, &st.A1.CholA, true)
	if st.Halves == 2 {
		put(32, &st.A2.ExpA, false)
		put(48, &st.A2.CholA, true)
	}
	c[64], c[65] = st.BScale, st.BScore
	return c
}

func (d *Device) ltCheck(x, score, z1, z2 *tensor.Tensor, st LTStep) (batch, dim int, p []uintptr, err error) {
	if st.N < 1 || st.N > hold.MaxBlocks || (st.Halves != 1 && st.Halves != 2) {
		return 0, 0, nil, fmt.Errorf("cuda: Lie–Trotter step: %d blocks, %d halves", st.N, st.Halves)
	}
	if x.Rank() != 2 || x.Dim(1)%st.N != 0 {
		return 0, 0, nil, fmt.Errorf("cuda: Lie–Trotter step: state %v is not (B, n·d) with n = %d", x.Shape(), st.N)
	}
	batch, dim = x.Dim(0), x.Dim(1)/st.N
	if z2 == nil {
		z2 = z1
	}
	for _, e := range []error{checkShape("Lie–Trotter score", score, batch, dim), checkShape("Lie–Trotter noise", z1, x.Shape()...),
		checkShape("Lie–Trotter noise", z2, x.Shape()...)} {
		if e != nil {
			return 0, 0, nil, e
		}
	}
	p, err = d.ptrs(x, score, z1, z2)
	return batch, dim, p, err
}

// LieTrotterStep runs B, A1 and (Halves = 2) A2 in one pass over the state x (B, n·d), in place:
// the state, the output score (B, d) and the noises z1, z2 (B, n·d; z2 unused and may be nil for
// one half) are read once and the state written once.
func (d *Device) LieTrotterStep(x, score, z1, z2 *tensor.Tensor, st LTStep) error {
	batch, dim, p, err := d.ltCheck(x, score, z1, z2, st)
	if err != nil || batch*dim == 0 {
		return err
	}
	coef, err := upload(d, st.coefficients())
	if err != nil {
		return err
	}
	defer d.release(coef)
	return d.launch("hg_lt_step", grid1D(batch*dim), new(args).i32(batch).i32(st.N).i32(dim).i32(st.Halves).
		ptr(coef.ptr).ptr(p[1]).ptr(p[2]).ptr(p[3]).ptr(p[0]))
}

// LieTrotterUnfused runs the same step as LieTrotterStep as separate B and A launches (the state
// makes three round trips through memory); benchmarks compare the two.
func (d *Device) LieTrotterUnfused(x, score, z1, z2 *tensor.Tensor, st LTStep) error {
	batch, dim, p, err := d.ltCheck(x, score, z1, z2, st)
	if err != nil || batch*dim == 0 {
		return err
	}
	coef, err := upload(d, st.coefficients())
	if err != nil {
		return err
	}
	defer d.release(coef)
	g := grid1D(batch * dim)
	if err := d.launch("hg_lt_b", g, new(args).i32(batch).i32(st.N).i32(dim).ptr64(coef.ptr).ptr(p[1]).ptr(p[0])); err != nil {
		return err
	}
	for half := 0; half < st.Halves; half++ {
		if err := d.launch("hg_lt_a", g, new(args).i32(batch).i32(st.N).i32(dim).i32(half).ptr64(coef.ptr).ptr(p[2+half]).ptr(p[0])); err != nil {
			return err
		}
	}
	return nil
}

// LieTrotterA applies one A-step x ← ExpA·x + CholA·z (hg_lt_a) in place to the state x (B, n·d)
// with the noise z (B, n·d): the opening half of a Lie–Trotter sampler, the prior's scaling, or
// the linear part of an Euler–Maruyama step (hold.SDE.EMStep).
func (d *Device) LieTrotterA(x, z *tensor.Tensor, st hold.Step) error {
	lt := LTStep{N: st.ExpA.N, A1: st, Halves: 1}
	if lt.N < 1 || lt.N > hold.MaxBlocks || x.Rank() != 2 || x.Dim(1)%lt.N != 0 {
		return fmt.Errorf("cuda: A-step: state %v is not (B, n·d) with n = %d", x.Shape(), lt.N)
	}
	if err := checkShape("A-step noise", z, x.Shape()...); err != nil {
		return err
	}
	batch, dim := x.Dim(0), x.Dim(1)/lt.N
	p, err := d.ptrs(x, z, z)
	if err != nil || batch*dim == 0 {
		return err
	}
	coef, err := upload(d, lt.coefficients())
	if err != nil {
		return err
	}
	defer d.release(coef)
	return d.launch("hg_lt_a", grid1D(batch*dim), new(args).i32(batch).i32(lt.N).i32(dim).i32(0).ptr64(coef.ptr).ptr(p[2]).ptr(p[0]))
}

// LieTrotterB applies x_n ← scale·x_n + c·score (hg_lt_b) in place to the last block of x (B, n·d),
// score (B, d).
func (d *Device) LieTrotterB(x, score *tensor.Tensor, n int, scale, c float64) error {
	lt := LTStep{N: n, BScale: scale, BScore: c, Halves: 1}
	batch, dim, p, err := d.ltCheck(x, score, x, nil, lt)
	if err != nil || batch*dim == 0 {
		return err
	}
	coef, err := upload(d, lt.coefficients())
	if err != nil {
		return err
	}
	defer d.release(coef)
	return d.launch("hg_lt_b", grid1D(batch*dim), new(args).i32(batch).i32(n).i32(dim).ptr64(coef.ptr).ptr(p[1]).ptr(p[0]))
}
