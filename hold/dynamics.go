package hold

import (
	"fmt"
	"math"

	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// What samplers and the likelihood need, for batches of states x (B×n·d, float64, SDE coordinates)
// and last-block scores (B×d).
//
// Forward SDE:   dx = f(x, t) dt + g(t) e_n dW,        f = β(t)·(F_c ⊗ I_d)x
// Reverse SDE:   with s = T − t running forward, dx = [−f + g²·score] ds + g dW̄
// PF ODE:        dx/ds = −f + ½g²·score              (in forward time dx/dt = f − ½g²·score)
// where F_c is the drift matrix in SDE coordinates and score = ∇_{x_n} log p_t(x).

// Diffusion returns g(t): the last block's noise is g(t) dW.
func (s *SDE) Diffusion(t float64) float64 {
	return math.Sqrt(s.clock.rate(t) * s.noiseUser)
}

// ForwardDrift writes f(x, t) for each sample at its time t.
func (s *SDE) ForwardDrift(dst, x []float64, t []float64) error {
	d, err := s.batchDims("forward drift", dst, x, nil, t)
	if err != nil {
		return err
	}
	for b, tb := range t {
		s.linearDrift(dst, x, b, d, s.clock.rate(tb))
	}
	return nil
}

// ReverseDrift writes −f(x, t) + g(t)²·score: the drift of the reverse SDE in reverse time, so that
// an Euler–Maruyama step from t to t − h is x + h·ReverseDrift + √h·g(t)·z on the last block.
func (s *SDE) ReverseDrift(dst, x, score []float64, t []float64) error {
	return s.reverse(dst, x, score, t, 1, "reverse drift")
}

// ProbabilityFlowDrift writes −f(x, t) + ½g(t)²·score, the probability-flow ODE in reverse time.
// Its negative is the forward-time ODE dx/dt used for likelihoods.
func (s *SDE) ProbabilityFlowDrift(dst, x, score []float64, t []float64) error {
	return s.reverse(dst, x, score, t, 0.5, "probability-flow drift")
}

func (s *SDE) reverse(dst, x, score []float64, t []float64, weight float64, what string) error {
	d, err := s.batchDims(what, dst, x, score, t)
	if err != nil {
		return err
	}
	last := (s.n - 1) * d
	for b, tb := range t {
		rate := s.clock.rate(tb)
		s.linearDrift(dst, x, b, d, -rate)
		row := dst[b*s.n*d+last : b*s.n*d+last+d]
		sc := score[b*d : (b+1)*d]
		g2 := weight * rate * s.noiseUser
		for i := range row {
			row[i] += g2 * sc[i]
		}
	}
	return nil
}

// linearDrift writes factor·(F_c ⊗ I)x for sample b.
func (s *SDE) linearDrift(dst, x []float64, b, d int, factor float64) {
	n := s.n
	xs := x[b*n*d : (b+1)*n*d]
	ds := dst[b*n*d : (b+1)*n*d]
	for i := 0; i < d; i++ {
		var v [MaxBlocks]float64
		for k := 0; k < n; k++ {
			v[k] = xs[k*d+i]
		}
		r := s.driftUser.mulVec(v[:n])
		for k := 0; k < n; k++ {
			ds[k*d+i] = factor * r[k]
		}
	}
}

// ApplyAStep applies the exact A-step x ← ExpA·x + CholA·z in place to a batch of `batch` states
// (per data dimension), with z the B×n·d standard normal noise; noise may be nil for the mean map alone.
func (s *SDE) ApplyAStep(x []float64, batch int, st Step, noise []float64) error {
	n := s.n
	d, err := s.rowDims("A-step", len(x), batch)
	if err != nil {
		return err
	}
	if st.ExpA.N != n || (noise != nil && len(noise) != len(x)) {
		return fmt.Errorf("hold: A-step: step of order %d and %d noise values for n = %d and %d states", st.ExpA.N, len(noise), n, len(x))
	}
	// Per sample, one vec.Mix64 pass in place over its n rows of d:
	// x[r] ← Σ_k ExpA[r][k]·x[k] + Σ_{j≤r} CholA[r][j]·z[j]; samples split
	// over the worker pool.
	nin := n
	if noise != nil {
		nin = 2 * n
	}
	var coef [MaxBlocks * 2 * MaxBlocks]float64
	for r := 0; r < n; r++ {
		for k := 0; k < n; k++ {
			coef[r*nin+k] = st.ExpA.a[r][k]
			if noise != nil && k <= r {
				coef[r*nin+n+k] = st.CholA.a[r][k]
			}
		}
	}
	parallel.For(batch, max(1, 1<<14/(n*d)), func(lo, hi int) {
		var rows, in [2 * MaxBlocks][]float64
		for b := lo; b < hi; b++ {
			for k := 0; k < n; k++ {
				rows[k] = x[(b*n+k)*d : (b*n+k+1)*d]
				in[k] = rows[k]
				if noise != nil {
					in[n+k] = noise[(b*n+k)*d : (b*n+k+1)*d]
				}
			}
			vec.Mix64(rows[:n], coef[:n*nin], in[:nin])
		}
	})
	return nil
}

// BStep applies the paper's explicit Euler B-step over a reverse step from t to t − h, in place:
// x_n ← x_n + q·Δτ·(score + Λ·x_n), the part of the reverse drift that the A-step leaves out
// (docs/math.md#b-step: s ← s + 2ξh(L⁻¹S + s) for HOLD with β = 1; CLD-SGM's score_step for CLD).
// score is B×d.
func (s *SDE) BStep(x, score []float64, batch int, t, h float64) error {
	return s.bUpdate(x, score, batch, t, h, false)
}

// BStepExact solves the B part exactly with the score frozen over the step:
// x_n ← x_n + (e^{qΛΔτ} − 1)/Λ·(score + Λ·x_n). It does not model how the score changes with x_n, which is
// what makes B stiff, and with exact scores it does worse than BStep (docs/math.md#b-step); the sample
// package's exponential B-step (LT-exp) does. For VE (Λ = 0) it equals BStep.
func (s *SDE) BStepExact(x, score []float64, batch int, t, h float64) error {
	return s.bUpdate(x, score, batch, t, h, true)
}

func (s *SDE) bUpdate(x, score []float64, batch int, t, h float64, exact bool) error {
	d, err := s.rowDims("B-step", len(x), batch)
	if err != nil {
		return err
	}
	if len(score) != batch*d {
		return fmt.Errorf("hold: B-step: want %d score values (B=%d, d=%d), got %d", batch*d, batch, d, len(score))
	}
	// last ← last + c·(score + Λ·last) = (1 + cΛ)·last + c·score.
	scale, c := s.BCoefficients(t, h, exact)
	coef := []float64{scale, c}
	parallel.For(batch, max(1, 1<<14/d), func(lo, hi int) {
		var in [2][]float64
		for b := lo; b < hi; b++ {
			in[0] = x[b*s.n*d+(s.n-1)*d : b*s.n*d+s.n*d]
			in[1] = score[b*d : (b+1)*d]
			vec.Mix64(in[:1], coef, in[:])
		}
	})
	return nil
}

// rowDims returns d for `total` values forming `batch` rows of n·d.
func (s *SDE) rowDims(what string, total, batch int) (int, error) {
	if batch <= 0 || total%(batch*s.n) != 0 {
		return 0, fmt.Errorf("hold: %s: %d values do not form %d rows of n·d with n = %d", what, total, batch, s.n)
	}
	return total / (batch * s.n), nil
}

// batchDims checks the shapes of a batch call and returns d.
func (s *SDE) batchDims(what string, dst, x, score []float64, t []float64) (int, error) {
	batch := len(t)
	if batch == 0 {
		if len(x) != 0 {
			return 0, fmt.Errorf("hold: %s: %d state values but no times", what, len(x))
		}
		return 0, nil
	}
	if len(x)%(batch*s.n) != 0 || len(dst) != len(x) {
		return 0, fmt.Errorf("hold: %s: state %d and destination %d do not form %d rows of n·d with n = %d", what, len(x), len(dst), batch, s.n)
	}
	d := len(x) / (batch * s.n)
	if score != nil && len(score) != batch*d {
		return 0, fmt.Errorf("hold: %s: want %d score values (B=%d, d=%d), got %d", what, batch*d, batch, d, len(score))
	}
	return d, nil
}
