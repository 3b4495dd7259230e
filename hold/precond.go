package hold

import (
	"fmt"
	"math"
)

// EDM-style preconditioning through the aligned gauge.
//
// Per data dimension the state u (n blocks) splits into the sufficient statistic c = toCᵀu, with
// c | q0 ~ N(q0, σ²) (NoiseLevel), and n−1 ancillary components w = N_tᵀL⁻¹u ~ N(0, I) that carry no
// information on q0 (N_t an orthonormal basis of a⊥, a = L⁻¹m; docs/samplers.md, "The aligned gauge").
// EDM's preconditioning (Karras et al. 2022, Table 1) applies to c as to a VE state:
//
//	network input  (c_in·c, w₁, …, w_{n−1}),        c_in   = 1/√(σ² + σ_d²)
//	x̂₀ = c_skip·c + c_out·F(input, t),               c_skip = σ_d²/(σ² + σ_d²),  c_out = σσ_d/√(σ² + σ_d²)
//	loss λ(σ)‖x̂₀ − q0‖² = ‖F − (q0 − c_skip·c)/c_out‖²,  λ = 1/c_out²
//
// and the score the samplers need follows exactly from x̂₀: ∇_u log p_t(u) = Σ⁻¹(m x̂₀ − u), so the
// last block's score is S = (rᵀm)·x̂₀ − rᵀu with r = Σ⁻¹e_n (Tweedie's formula in the full state).
// The network's time input stays t (σ_t increases with t, so it conditions on the same information).
//
// Both ends are evaluated in float64 outside the network, because at small σ they cancel: for HOLD-4
// at σ = 3·10⁻⁶, rᵀm·x̂₀ and rᵀu are 10⁶ times the score they differ by. Training forms the input and
// the target from the draw itself, u = m q0 + Lε: c = q0 + σ·âᵀε and w = Nᵀε (â = a/|a|), with no
// cancellation; sampling reads c, w and the score from the float64 state.

// EDMSigmaData is EDM's σ_data for images scaled to [−1, 1].
const EDMSigmaData = 0.5

// Precond holds the coefficients of EDM-style preconditioning at one time, per data dimension.
type Precond struct {
	Sigma            float64 // σ_t of the sufficient statistic
	CIn, CSkip, COut float64
	ToC              [MaxBlocks]float64            // c = Σ_i ToC[i]·u_i
	In               [MaxBlocks][MaxBlocks]float64 // network input block j = Σ_i In[j][i]·u_i: (c_in·c, w₁, …)
	Unit             [MaxBlocks]float64            // â = a/|a|: c = q0 + σ·âᵀε for u = m q0 + Lε
	Basis            [MaxBlocks][MaxBlocks]float64 // rows 0…n−2: w_k = Basis[k]·ε (N_tᵀ)
	ScoreX0          float64                       // S = ScoreX0·x̂₀ − Σ_i ScoreU[i]·u_i: rᵀm
	ScoreU           [MaxBlocks]float64            // r = Σ⁻¹e_n
	Blocks           int
}

// EDMPrecond returns the preconditioning coefficients at forward time t with data standard deviation
// sigmaData, from the marginal kernel in float64. The objective must condition on q0 only (BCSM, HSM,
// VP's and VE's ε): DSM's targets are not a function of x̂₀.
func (s *SDE) EDMPrecond(t, sigmaData float64) (Precond, error) {
	if s.cfg.Objective == ObjectiveDSM && s.n > 1 {
		return Precond{}, fmt.Errorf("hold: EDM preconditioning needs an objective that conditions on q0 only (bcsm, hsm), not %s", s.cfg.Objective)
	}
	if !(sigmaData > 0) || math.IsInf(sigmaData, 0) {
		return Precond{}, fmt.Errorf("hold: EDM preconditioning: σ_data must be positive and finite, got %g", sigmaData)
	}
	n := s.n
	k := s.Kernel(t)
	// Linv = L⁻¹ (lower triangular), a = L⁻¹m.
	var linv [MaxBlocks][MaxBlocks]float64
	for j := 0; j < n; j++ {
		if !(k.Chol.At(j, j) > 0) {
			return Precond{}, fmt.Errorf("hold: EDM preconditioning at t = %g: kernel covariance is not positive definite", t)
		}
	}
	for c := 0; c < n; c++ {
		for i := c; i < n; i++ {
			v := 0.0
			if i == c {
				v = 1
			}
			for j := c; j < i; j++ {
				v -= k.Chol.At(i, j) * linv[j][c]
			}
			linv[i][c] = v / k.Chol.At(i, i)
		}
	}
	var a [MaxBlocks]float64
	var snr float64
	for i := 0; i < n; i++ {
		for j := 0; j <= i; j++ {
			a[i] += linv[i][j] * k.Mean.At(j, 0)
		}
		snr += a[i] * a[i]
	}
	if !(snr > 0) || math.IsInf(snr, 0) {
		return Precond{}, fmt.Errorf("hold: EDM preconditioning at t = %g: signal-to-noise ratio %g", t, snr)
	}
	p := Precond{Blocks: n}
	sigma2 := 1 / snr
	p.Sigma = math.Sqrt(sigma2)
	sd2 := sigmaData * sigmaData
	p.CIn = 1 / math.Sqrt(sigma2+sd2)
	p.CSkip = sd2 / (sigma2 + sd2)
	p.COut = p.Sigma * sigmaData * p.CIn
	norm := math.Sqrt(snr)
	for i := 0; i < n; i++ {
		p.Unit[i] = a[i] / norm
	}
	// c = aᵀL⁻¹u/|a|².
	for j := 0; j < n; j++ {
		for i := j; i < n; i++ {
			p.ToC[j] += a[i] * linv[i][j]
		}
		p.ToC[j] /= snr
		p.In[0][j] = p.CIn * p.ToC[j]
	}
	// w = N_tᵀL⁻¹u: N_t = columns 2…n of the Householder reflection H = I − 2vvᵀ/|v|², v = e₁ − â,
	// which maps e₁ to â = a/|a| (the basis sample.gauge uses; â₁ > 0, so v ≠ 0 unless â = e₁).
	if n > 1 {
		var v [MaxBlocks]float64
		var vv float64
		for i := 0; i < n; i++ {
			v[i] = -a[i] / norm
		}
		v[0]++
		for i := 0; i < n; i++ {
			vv += v[i] * v[i]
		}
		for j := 1; j < n; j++ { // basis vector j−1 = column j of H
			var col [MaxBlocks]float64
			for i := 0; i < n; i++ {
				if i == j {
					col[i] = 1
				}
				if vv > 0 {
					col[i] -= 2 * v[i] * v[j] / vv
				}
			}
			p.Basis[j-1] = col
			for c := 0; c < n; c++ {
				for i := c; i < n; i++ {
					p.In[j][c] += col[i] * linv[i][c]
				}
			}
		}
	}
	// r = Σ⁻¹e_n = L⁻ᵀL⁻¹e_n: L⁻¹e_n = linv[:, n−1] = (0, …, 0, 1/L_nn).
	last := linv[n-1][n-1]
	for i := 0; i < n; i++ {
		p.ScoreU[i] = linv[n-1][i] * last
		p.ScoreX0 += p.ScoreU[i] * k.Mean.At(i, 0)
	}
	return p, nil
}

// X0 returns x̂₀ = c_skip·c + c_out·F for the state u (n blocks of one data dimension) and the
// network's output f.
func (p *Precond) X0(u []float64, f float64) float64 {
	var c float64
	for i := 0; i < p.Blocks; i++ {
		c += p.ToC[i] * u[i]
	}
	return p.CSkip*c + p.COut*f
}

// Score returns the last block's score (rᵀm)·x̂₀ − rᵀu of the state u given x̂₀.
func (p *Precond) Score(u []float64, x0 float64) float64 {
	s := p.ScoreX0 * x0
	for i := 0; i < p.Blocks; i++ {
		s -= p.ScoreU[i] * u[i]
	}
	return s
}

// Input writes the network's input (c_in·c, w₁, …, w_{n−1}) of the state u to dst (n values).
func (p *Precond) Input(dst, u []float64) {
	for j := 0; j < p.Blocks; j++ {
		var v float64
		for i := 0; i < p.Blocks; i++ {
			v += p.In[j][i] * u[i]
		}
		dst[j] = v
	}
}

// Draw writes the network's input of the state u = m q0 + Lε to dst (n values) without forming u,
// and returns the regression target F* = (q0 − c_skip·c)/c_out: c = q0 + σ·âᵀε, w = Nᵀε.
func (p *Precond) Draw(dst []float64, q0 float64, eps []float64) (target float64) {
	var e float64
	for i := 0; i < p.Blocks; i++ {
		e += p.Unit[i] * eps[i]
	}
	c := q0 + p.Sigma*e
	dst[0] = p.CIn * c
	for k := 0; k+1 < p.Blocks; k++ {
		var w float64
		for i := 0; i < p.Blocks; i++ {
			w += p.Basis[k][i] * eps[i]
		}
		dst[k+1] = w
	}
	// q0 − c_skip·c = (1 − c_skip)·q0 − c_skip·σ·e, with 1 − c_skip = σ²·c_in² formed without cancellation.
	return (p.Sigma*p.Sigma*p.CIn*p.CIn*q0 - p.CSkip*p.Sigma*e) / p.COut
}
