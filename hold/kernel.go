package hold

// Kernel is the Gaussian perturbation kernel of one time t, per data dimension, in the SDE's
// coordinates: x_t ~ N(Mean·x_0, Sigma). For the marginal kernel (b0 = {q0}) x_0 = (q0, 0, …, 0) and
// the auxiliary blocks' initial noise is part of Sigma.
type Kernel struct {
	Mean  Matrix  // e^{τ(t)F} in SDE coordinates; column 0 holds the coefficients of q0 in μ_t
	Sigma Matrix  // Σ_t
	Chol  Matrix  // lower Cholesky factor L_t of Σ_t
	Ell   float64 // ℓ_t = 1/L_t[n−1][n−1]; given x_0 the last-block score is −ℓ_t·ε_last
}

// Step is the exact transition of the linear part A of the reverse SDE over one step, dx = Fᵀx dτ + √q dW̄
// in native coordinates (docs/math.md#a-step): x ← ExpA·x + CholA·z with z ~ N(0, I), per data dimension.
type Step struct {
	ExpA  Matrix
	CholA Matrix
}

// evaluator computes the kernel in native coordinates (stationary law N(0, I)) over native time τ.
// marginal selects Σ_0 = diag(0, α, …, α) (b0 = {q0}); otherwise Σ_0 = 0 (the full initial state is
// known). Implementations: hold3Kernel (closed form), chainKernel (general n), scalarKernel (VP),
// brownianKernel (VE).
type evaluator interface {
	eval(tau float64, marginal bool) nativeKernel
}

type nativeKernel struct {
	exp, sigma, chol Matrix
	ell              float64
}

// Kernel returns the marginal perturbation kernel at time t > 0 (b0 = {q0}: the auxiliary blocks
// start from N(0, α/L) and are integrated out). This is the law the data are diffused with, whatever
// the objective.
func (s *SDE) Kernel(t float64) Kernel {
	return s.userKernel(s.eval.eval(s.clock.tau(t), true))
}

// NoiseKernel returns the kernel given the full initial state (Σ_0 = 0), as used by DSM.
func (s *SDE) NoiseKernel(t float64) Kernel {
	return s.userKernel(s.eval.eval(s.clock.tau(t), false))
}

// ObjectiveKernel returns the kernel the configured objective trains with: NoiseKernel for DSM with
// auxiliary blocks, Kernel otherwise (for n = 1 the objectives coincide; VE keeps score_sde's σ(t)).
func (s *SDE) ObjectiveKernel(t float64) Kernel {
	if s.cfg.Objective == ObjectiveDSM && s.n > 1 {
		return s.NoiseKernel(t)
	}
	return s.Kernel(t)
}

// Ell returns ℓ_t of the configured objective: the factor that turns the network's noise prediction
// into a score (see ScoreFromOutput).
func (s *SDE) Ell(t float64) float64 { return s.ObjectiveKernel(t).Ell }

func (s *SDE) userKernel(k nativeKernel) Kernel {
	n := s.n
	var inv [MaxBlocks]float64
	for i := 0; i < n; i++ {
		inv[i] = 1 / s.scale[i]
	}
	one := [MaxBlocks]float64{1, 1, 1, 1}
	return Kernel{
		Mean:  k.exp.scaleRowsCols(s.scale[:n], inv[:n]),
		Sigma: k.sigma.scaleRowsCols(s.scale[:n], s.scale[:n]),
		Chol:  k.chol.scaleRowsCols(s.scale[:n], one[:n]),
		Ell:   k.ell * inv[n-1],
	}
}

// AStep returns the exact A-step for a reverse-time step from forward time t to t − h.
//
// The reverse drift splits as −F x + q∇log p = [Fᵀ x] + [q(∇log p + Λx)] (native coordinates), because
// F + Fᵀ = −qΛ e_n e_nᵀ. The A part, dx = Fᵀx dτ + √q dW̄, has mean map e^{ΔτFᵀ} and noise covariance
// C_A = D·N(Δτ)·D with N the forward noise covariance and D = diag(1, −1, 1, …), since D F D = Fᵀ for a
// chain (docs/math.md#a-step). So chol(C_A) = D·chol(N)·D, with no cancellation at small h.
func (s *SDE) AStep(t, h float64) Step {
	k := s.eval.eval(s.clock.step(t, h), false)
	n := s.n
	var sign [MaxBlocks]float64
	for i := 0; i < n; i++ {
		sign[i] = 1
		if i%2 == 1 {
			sign[i] = -1
		}
	}
	expA := k.exp.transpose()
	cholA := k.chol.scaleRowsCols(sign[:n], sign[:n])
	var inv [MaxBlocks]float64
	one := [MaxBlocks]float64{1, 1, 1, 1}
	for i := 0; i < n; i++ {
		inv[i] = 1 / s.scale[i]
	}
	return Step{
		ExpA:  expA.scaleRowsCols(s.scale[:n], inv[:n]),
		CholA: cholA.scaleRowsCols(s.scale[:n], one[:n]),
	}
}

// EstimateWeights returns the weights a of the flat-prior estimate of the data block from the state
// at time t: x̂₀ = Σ_j a_j·x_j per data dimension, the generalised-least-squares (best linear unbiased)
// estimate a = Σ_t⁻¹m_t / (m_tᵀΣ_t⁻¹m_t), with m_t = Mean[:, 0] and Σ_t the objective's kernel
// (ObjectiveKernel). It is evaluated as u = L_t⁻¹m_t, a = L_t⁻ᵀu / (uᵀu) in float64 (Σ_t is
// ill-conditioned at small t, 1e13 at t = 1e-3 for HOLD-3, L_t is not). 1/√(uᵀu) is the estimate's
// standard deviation: for HOLD-3 (L = 2, α = 0.02) 1.4e-5 at t = 0.01, 3.9e-3 at 0.1, 0.5 at 1, so
// at small t the state pins x₀ down whatever the data. The score MLP takes Fourier features of x̂₀
// (layers.MLPConfig.Estimate).
func (s *SDE) EstimateWeights(t float64) []float64 {
	k := s.ObjectiveKernel(t)
	n := s.n
	var u [MaxBlocks]float64
	uu := 0.0
	for r := 0; r < n; r++ { // forward substitution: L u = m
		v := k.Mean.At(r, 0)
		for j := 0; j < r; j++ {
			v -= k.Chol.At(r, j) * u[j]
		}
		u[r] = v / k.Chol.At(r, r)
		uu += u[r] * u[r]
	}
	a := make([]float64, n)
	for r := n - 1; r >= 0; r-- { // back substitution: Lᵀ a = u / uᵀu
		v := u[r] / uu
		for j := r + 1; j < n; j++ {
			v -= k.Chol.At(j, r) * a[j]
		}
		a[r] = v / k.Chol.At(r, r)
	}
	return a
}
