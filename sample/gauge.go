package sample

import (
	"fmt"
	"math"

	"holdgo/hold"
)

// The sufficient statistic and the aligned gauge.
//
// Per data dimension the state u (n blocks) has the kernel u_t | q0 ~ N(m_t q0, Σ_t), the same for every
// data dimension and independent of the data. With L_t = chol(Σ_t) and a_t = L_t⁻¹m_t, the whitened
// state v = L_t⁻¹u is N(a_t q0, I): the likelihood of q0 depends on u only through
//
//	c_t = a_tᵀv/|a_t|² = m_tᵀΣ_t⁻¹u / SNR_t,   SNR_t = |a_t|² = m_tᵀΣ_t⁻¹m_t,
//
// and c_t | q0 ~ N(q0, σ_t²) with σ_t = SNR_t^(−1/2). So E[q0 | u_t] = E[q0 | c_t] is the denoiser of a
// VE diffusion at noise level σ_t, for every order n (CLD and VP included; for VP c = x/α_t and
// σ = σ_t/α_t). The other n−1 whitened components, w = N_tᵀv with N_t an orthonormal basis of a_t⊥, are
// N(0, I) whatever q0 and carry no information on it.
//
// In the aligned gauge the deterministic flow keeps w constant and moves c by EDM's VE probability-flow
// ODE dc/dσ = (c − x̂₀(c, σ))/σ; the full state is rebuilt only to query the network,
//
//	u_t = m_t c + L_t N_t w,
//
// and u_t has exactly the model's marginal at t whenever c has the VE marginal at σ_t and w ~ N(0, I),
// because L N (L N)ᵀ = L(I − ââᵀ)Lᵀ = Σ − m mᵀ/SNR. N_t is the Householder reflection that maps e₁ to
// â = a/|a| with its first column dropped: it varies smoothly with t (â₁ = m_q/(L₁₁|a|) > 0, so â never
// comes near −e₁, the reflection's one discontinuity). Any VE or VP solver in σ (DDIM, DPM-Solver++,
// Heun on EDM's grid) then applies to every SDE of the family verbatim; on VP's σ-grid the aligned HOLD
// sampler is VP's sampler, number for number, given the same c at the start and exact scores.
// Derivation: the project's docs/samplers.md, section "The aligned gauge".

// gauge holds the aligned-gauge quantities of one forward time.
type gauge struct {
	t      float64
	sigma  float64 // σ_t = SNR_t^(−1/2)
	lambda float64 // −log σ_t
	m      vecN    // m_t, the q0 column of the kernel's mean map
	l      mat     // L_t = chol(Σ_t)
	ln     mat     // columns 0…n−2: L_t N_t (n×(n−1))
	toC    vecN    // c = toCᵀu: L_t⁻ᵀa_t/|a_t|²
	toW    mat     // rows 0…n−2: w = toW·u = N_tᵀL_t⁻¹u
}

// newGauge evaluates the kernel at t in float64 and builds the gauge. It fails when the kernel is not
// usable there (t outside the SDE's range, or a covariance that is not positive definite in float64).
func newGauge(sde *hold.SDE, t float64) (gauge, error) {
	n := sde.Blocks()
	k := sde.Kernel(t)
	g := gauge{t: t, l: fromHold(&k.Chol, n)}
	for i := 0; i < n; i++ {
		g.m[i] = k.Mean.At(i, 0)
		if !(g.l[i][i] > 0) {
			return gauge{}, fmt.Errorf("sample: aligned gauge at t = %g: kernel covariance is not positive definite (L[%d][%d] = %g)", t, i, i, g.l[i][i])
		}
	}
	linv, err := inverse(&g.l, n)
	if err != nil {
		return gauge{}, fmt.Errorf("sample: aligned gauge at t = %g: %w", t, err)
	}
	a := mulVec(&linv, g.m, n)
	var snr float64
	for i := 0; i < n; i++ {
		snr += a[i] * a[i]
	}
	if !(snr > 0) || math.IsInf(snr, 0) {
		return gauge{}, fmt.Errorf("sample: aligned gauge at t = %g: signal-to-noise ratio %g", t, snr)
	}
	g.sigma = 1 / math.Sqrt(snr)
	g.lambda = -math.Log(g.sigma)
	norm := math.Sqrt(snr)
	// c = aᵀL⁻¹u/|a|²: the row aᵀL⁻¹/|a|².
	for j := 0; j < n; j++ {
		var s float64
		for i := 0; i < n; i++ {
			s += a[i] * linv[i][j]
		}
		g.toC[j] = s / snr
	}
	if n == 1 {
		return g, nil
	}
	// Householder H = I − 2vvᵀ/|v|², v = e₁ − â, maps e₁ to â; N = columns 1…n−1 of H.
	var v vecN
	var vv float64
	for i := 0; i < n; i++ {
		v[i] = -a[i] / norm
	}
	v[0] += 1
	for i := 0; i < n; i++ {
		vv += v[i] * v[i]
	}
	var nb mat // nb[i][j]: component i of basis vector j
	for i := 0; i < n; i++ {
		for j := 0; j < n-1; j++ {
			h := 0.0
			if i == j+1 {
				h = 1
			}
			if vv > 0 {
				h -= 2 * v[i] * v[j+1] / vv
			}
			nb[i][j] = h
		}
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n-1; j++ {
			var s float64
			for q := 0; q <= i; q++ {
				s += g.l[i][q] * nb[q][j]
			}
			g.ln[i][j] = s
		}
	}
	for j := 0; j < n-1; j++ {
		for col := 0; col < n; col++ {
			var s float64
			for i := 0; i < n; i++ {
				s += nb[i][j] * linv[i][col]
			}
			g.toW[j][col] = s
		}
	}
	return g, nil
}

// split writes the statistic c (B×d) and the ancillary components w (B×(n−1)·d, block j in columns
// [j·d, (j+1)·d)) of the states x (B×n·d).
//
// It first takes out m·q̃ with q̃ = u_q/m_q: since toCᵀm = 1 and toW·m = 0, c = q̃ + toCᵀ(u − m q̃) and
// w = toW·(u − m q̃), where u − m q̃ has a zero first component. At small t, σ_t is far below the
// q block's own noise (HOLD-3 at t = 1e-5: σ ≈ 5e-13 while L₁₁ ≈ 1e-6) and toC, toW have entries of
// order 1/L₁₁ in their first column; multiplying u_q by them directly would leave rounding errors of
// order 1e-16·|u_q|/L₁₁ in w. (c itself cannot be resolved below the ulp of q̃.)
func (g *gauge) split(c, w, x []float64, n, d, batch int) {
	var r vecN
	for b := 0; b < batch; b++ {
		row := x[b*n*d : (b+1)*n*d]
		for i := 0; i < d; i++ {
			qt := row[i] / g.m[0]
			for k := 1; k < n; k++ {
				r[k] = row[k*d+i] - g.m[k]*qt
			}
			s := 0.0
			for k := 1; k < n; k++ {
				s += g.toC[k] * r[k]
			}
			c[b*d+i] = qt + s
			for j := 0; j < n-1; j++ {
				var s float64
				for k := 1; k < n; k++ {
					s += g.toW[j][k] * r[k]
				}
				w[(b*(n-1)+j)*d+i] = s
			}
		}
	}
}

// rebuild writes the states u = m c + L N w (B×n·d) of the statistic c and the ancillary components w.
func (g *gauge) rebuild(x, c, w []float64, n, d, batch int) {
	for b := 0; b < batch; b++ {
		row := x[b*n*d : (b+1)*n*d]
		for i := 0; i < d; i++ {
			cv := c[b*d+i]
			for k := 0; k < n; k++ {
				s := g.m[k] * cv
				for j := 0; j < n-1; j++ {
					s += g.ln[k][j] * w[(b*(n-1)+j)*d+i]
				}
				row[k*d+i] = s
			}
		}
	}
}

// NoiseLevel returns σ_t = (m_tᵀΣ_t⁻¹m_t)^(−1/2), the noise level of the sufficient statistic of an
// SDE's state at forward time t: c_t | q0 ~ N(q0, σ_t²).
func NoiseLevel(sde *hold.SDE, t float64) (float64, error) {
	g, err := newGauge(sde, t)
	if err != nil {
		return 0, err
	}
	return g.sigma, nil
}

// TimeAtNoiseLevel returns the forward time t in [lo, hi] at which NoiseLevel is sigma (bisection in
// log t; σ_t increases with t), or an error when sigma lies outside [σ_lo, σ_hi].
func TimeAtNoiseLevel(sde *hold.SDE, sigma, lo, hi float64) (float64, error) {
	slo, err := NoiseLevel(sde, lo)
	if err != nil {
		return 0, err
	}
	shi, err := NoiseLevel(sde, hi)
	if err != nil {
		return 0, err
	}
	if !(sigma >= slo*(1-1e-12) && sigma <= shi*(1+1e-12)) {
		return 0, fmt.Errorf("sample: noise level %g outside [%g, %g], the range of t in [%g, %g]", sigma, slo, shi, lo, hi)
	}
	a, b := math.Log(lo), math.Log(hi)
	target := math.Log(sigma)
	for range 200 {
		mid := 0.5 * (a + b)
		s, err := NoiseLevel(sde, math.Exp(mid))
		if err != nil {
			return 0, err
		}
		if math.Log(s) < target {
			a = mid
		} else {
			b = mid
		}
		if b-a < 1e-15 {
			break
		}
	}
	return math.Exp(0.5 * (a + b)), nil
}
