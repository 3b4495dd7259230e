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

// Step is the exact transition of the linear part A of the reverse SDE over one step (hold-math §4):
// x ← ExpA·x + CholA·z with z ~ N(0, I), per data dimension.
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
// chain (hold-math §0.2, §4). So chol(C_A) = D·chol(N)·D, with no cancellation at small h.
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
