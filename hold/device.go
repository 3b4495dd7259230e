package hold

import "holdgo/tensor"

// The coefficients of the fused device ops (tensor.Perturb, tensor.BlockStep), computed here in
// float64 from the formulas of this package, so that every device only applies them.

// PutPerturbCoefficients stores the tensor.Perturb coefficients of the time t in dst
// (tensor.PerturbCoefLen slots): PerturbMaps' mean map M, then its Cholesky factor C, both 4×4
// row-major float64.
func (s *SDE) PutPerturbCoefficients(dst []float32, t float64) {
	m, l := s.PerturbMaps(t)
	c := make([]float64, 32)
	for r := range MaxBlocks {
		for j := range MaxBlocks {
			c[4*r+j], c[16+4*r+j] = m[r][j], l[r][j]
		}
	}
	tensor.PutFloat64s(dst[:tensor.PerturbCoefLen], c)
}

// Map is the step as a tensor.BlockMap (CholA's lower triangle).
func (st Step) Map() tensor.BlockMap {
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

// AAffine is the A-step st alone (tensor.BlockStep without a score).
func (s *SDE) AAffine(st Step) tensor.BlockAffine {
	return tensor.BlockAffine{Blocks: s.n, A: [2]tensor.BlockMap{st.Map()}, Halves: 1}
}

// LieTrotterAffine is the fused Lie–Trotter step that follows the score evaluation of the reverse
// step from t to t − h: B over (t, h) with the score ℓ·E_θ (Euler as BStep, or exact as
// BStepExact; BCoefficients), the closing half A(t − h/2, h/2) and, if hNext > 0, the next step's
// opening half A(t − h, hNext/2).
func (s *SDE) LieTrotterAffine(t, h, hNext, ell float64, exact bool) tensor.BlockAffine {
	scale, c := s.BCoefficients(t, h, exact)
	a := tensor.BlockAffine{Blocks: s.n, BScale: scale, BScore: c * ell, Halves: 1}
	a.A[0] = s.AStep(t-h/2, h/2).Map()
	if hNext > 0 {
		a.A[1], a.Halves = s.AStep(t-h, hNext/2).Map(), 2
	}
	return a
}

// PriorAffine maps standard normal noise z to a prior draw, x = diag(PriorStd)·z, as an A-step of
// the zero state.
func (s *SDE) PriorAffine() tensor.BlockAffine {
	a := tensor.BlockAffine{Blocks: s.n, Halves: 1}
	for k := range s.n {
		a.A[0].Chol[k][k] = s.PriorStd(k)
	}
	return a
}

// EMAffine is the Euler–Maruyama step from t to t − h (EMStep) with the score ℓ·E_θ: the A-step
// x ← ExpA·x + CholA·z, then (a second op, as the score is taken at the step's start) the B-step
// x_n ← x_n + c·ℓ·E_θ.
func (s *SDE) EMAffine(t, h, ell float64) (a, b tensor.BlockAffine) {
	st, c := s.EMStep(t, h)
	return s.AAffine(st), tensor.BlockAffine{Blocks: s.n, BScale: 1, BScore: c * ell}
}
