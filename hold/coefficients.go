package hold

import "math"

// The coefficients of the fused kernels, in one place: the CPU kernels of this package and the
// fused device ops (tensor.Perturb, tensor.BlockStep; laid out by hold/holdops, applied by every
// device, on CUDA by kernels/hold.cu and kernels/lietrotter.cu) both read them from here.

// PerturbMaps returns the affine map of the fused reparameterisation at time t:
// x_t[r] = Σ_j M[r][j]·x0_j + Σ_{j≤r} C[r][j]·ε_j for the objective's kernel, where x0_0 = q0 and,
// for DSM with n > 1, x0_j (j ≥ 1) is standard normal noise: column j ≥ 1 of M is already multiplied
// by the initial auxiliary standard deviation of block j (√(α·prior variance of block j) = scale_j·√α,
// √(α/L) for HOLD; docs/math.md#bcsm-objective). For BCSM those columns are zero-weighted (the auxiliary blocks start at 0). C is lower
// triangular; entries beyond n are zero.
func (s *SDE) PerturbMaps(t float64) (m, c [MaxBlocks][MaxBlocks]float64) {
	k := s.ObjectiveKernel(t)
	dsm := s.cfg.Objective == ObjectiveDSM && s.n > 1
	for r := 0; r < s.n; r++ {
		m[r][0] = k.Mean.a[r][0]
		for j := 1; j < s.n; j++ {
			if dsm {
				m[r][j] = k.Mean.a[r][j] * s.auxStd(j)
			}
		}
		for j := 0; j <= r; j++ {
			c[r][j] = k.Chol.a[r][j]
		}
	}
	return m, c
}

// auxStd is the initial standard deviation of auxiliary block j ≥ 1 in SDE coordinates.
func (s *SDE) auxStd(j int) float64 { return s.scale[j] * math.Sqrt(s.auxVar) }

// BCoefficients returns the B-step over the reverse step from t to t − h as the affine update of
// the last block, x_n ← scale·x_n + c·score: scale = 1 + c·Λ with c = q·Δτ (Euler, BStep) or, if
// exact, c = (e^{q·Δτ·Λ} − 1)/Λ (BStepExact; for Λ = 0 both are q·Δτ).
func (s *SDE) BCoefficients(t, h float64, exact bool) (scale, c float64) {
	c = s.noiseUser * s.clock.step(t, h)
	if exact && s.splitUser > 0 {
		c = math.Expm1(c*s.splitUser) / s.splitUser
	}
	return 1 + c*s.splitUser, c
}

// EMStep returns the Euler–Maruyama step of the reverse SDE from t to t − h (as ReverseDrift and
// the sample package's EM sampler use it) in the A/B form of the device sampler: with the score S
// taken at the step's start, x ← ExpA·x + CholA·z then x_n ← x_n + c·S, where ExpA = I − h·β(t)·F
// (F the drift matrix), CholA has the one entry √h·g(t) on the last block, and c = h·g(t)².
func (s *SDE) EMStep(t, h float64) (Step, float64) {
	rate := s.clock.rate(t)
	st := Step{ExpA: identity(s.n), CholA: Matrix{N: s.n}}
	for r := 0; r < s.n; r++ {
		var e [MaxBlocks]float64
		e[r] = 1
		col := s.driftUser.mulVec(e[:s.n]) // column r of F
		for k := 0; k < s.n; k++ {
			st.ExpA.a[k][r] -= h * rate * col[k]
		}
	}
	g := s.Diffusion(t)
	st.CholA.a[s.n-1][s.n-1] = math.Sqrt(h) * g
	return st, h * rate * s.noiseUser
}

// PriorStd returns the prior's standard deviation of block k (PriorSample draws std·z).
func (s *SDE) PriorStd(k int) float64 { return math.Sqrt(s.priorVar[k]) }
