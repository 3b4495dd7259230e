// Package holdops computes the coefficients of the fused tensor ops that the HOLD family runs on a
// device (tensor.Perturb, tensor.BlockStep) in float64 from package hold's formulas, in the layouts
// of package tensor: train and sample call it, and every device only applies the coefficients. It
// is where the two cores meet, so that hold and tensor need not know each other.
package holdops

import (
	"holdgo/hold"
	"holdgo/tensor"
)

// PutPerturbCoefficients stores the tensor.Perturb coefficients of the time t in dst
// (tensor.PerturbCoefLen slots): hold.SDE.PerturbMaps' mean map M, then its Cholesky factor C,
// both 4×4 row-major float64.
func PutPerturbCoefficients(dst []float32, s *hold.SDE, t float64) {
	m, l := s.PerturbMaps(t)
	var c [32]float64
	for r := range hold.MaxBlocks {
		for j := range hold.MaxBlocks {
			c[4*r+j], c[16+4*r+j] = m[r][j], l[r][j]
		}
	}
	tensor.PutFloat64s(dst[:tensor.PerturbCoefLen], c[:])
}

// Map is the A-step st as a tensor.BlockMap (CholA's lower triangle).
func Map(st hold.Step) tensor.BlockMap {
	var m tensor.BlockMap
	for r := 0; r < st.ExpA.N; r++ {
		for j := 0; j < st.ExpA.N; j++ {
			m.Exp[r][j] = st.ExpA.At(r, j)
			if j <= r {
				m.Chol[r][j] = st.CholA.At(r, j)
			}
		}
	}
	return m
}

// AStep is the A-step st of an n-block SDE alone (tensor.BlockStep without a score).
func AStep(st hold.Step) tensor.BlockAffine {
	return tensor.BlockAffine{Blocks: st.ExpA.N, A: [2]tensor.BlockMap{Map(st)}, Halves: 1}
}

// LieTrotter is the fused Lie–Trotter step that follows the score evaluation of the reverse step
// from t to t − h: B over (t, h) with the score ℓ·E_θ (Euler as hold.SDE.BStep, or exact as
// BStepExact; BCoefficients), the closing half A(t − h/2, h/2) and, if hNext > 0, the next step's
// opening half A(t − h, hNext/2).
func LieTrotter(s *hold.SDE, t, h, hNext, ell float64, exact bool) tensor.BlockAffine {
	scale, c := s.BCoefficients(t, h, exact)
	a := tensor.BlockAffine{Blocks: s.Blocks(), BScale: scale, BScore: c * ell, Halves: 1}
	a.A[0] = Map(s.AStep(t-h/2, h/2))
	if hNext > 0 {
		a.A[1], a.Halves = Map(s.AStep(t-h, hNext/2)), 2
	}
	return a
}

// Prior maps standard normal noise z to a prior draw, x = diag(PriorStd)·z, as an A-step of the
// zero state.
func Prior(s *hold.SDE) tensor.BlockAffine {
	a := tensor.BlockAffine{Blocks: s.Blocks(), Halves: 1}
	for k := range s.Blocks() {
		a.A[0].Chol[k][k] = s.PriorStd(k)
	}
	return a
}

// EulerMaruyama is the Euler–Maruyama step from t to t − h (hold.SDE.EMStep) with the score
// ℓ·E_θ: the A-step x ← ExpA·x + CholA·z, then (a second op, as the score is taken at the step's
// start) the B-step x_n ← x_n + c·ℓ·E_θ.
func EulerMaruyama(s *hold.SDE, t, h, ell float64) (a, b tensor.BlockAffine) {
	st, c := s.EMStep(t, h)
	return AStep(st), tensor.BlockAffine{Blocks: s.Blocks(), BScale: 1, BScore: c * ell}
}
