package sample

import (
	"fmt"
	"math"
	"slices"

	"holdgo/hold"
)

// The flow of the x̂₀ samplers (docs/math.md#the-flow-of-a).
//
// Per data dimension the state u (n blocks) has the kernel u_t | q0 ~ N(m_t q0, Σ_t), so the score is
// ∇log p_t(u) = −Σ_t⁻¹(u − m_t x̂₀) with x̂₀ = E[q0 | u_t = u], and the probability-flow ODE reads
//
//	du/dt = A(t)u + b(t)x̂₀,   A = F_t + ½GGᵀΣ_t⁻¹,   b = −½GGᵀΣ_t⁻¹m_t   (GGᵀ = g(t)² e_n e_nᵀ).
//
// A's flow is Φ(t′,t) = R_{t′}R_t⁻¹ with R the solution of dR/dt = F_t R + ½GGᵀR⁻ᵀ (then RRᵀ = Σ
// always). We write R_t = L_t Q_t with L_t the kernel's accurate Cholesky factor and Q_t orthogonal;
// differentiating gives Q′ = ΩQ with the skew-symmetric
//
//	Ω = M + ½N − low(M + Mᵀ + N),   M = L⁻¹F_t L,   N = L⁻¹GGᵀL⁻ᵀ = g²ℓ_t² e_n e_nᵀ,
//
// low(X) the strict lower triangle of X plus half its diagonal (L⁻¹L′ = low(L⁻¹Σ′L⁻ᵀ)). In s = log t,
// tΩ stays of order one down to t → 0 although Σ_t's condition number grows like 1e13 at t = 1e-3:
// the ill-conditioning is carried by the exact L_t, and only the rotation Q is integrated
// (classical RK4 in log t, steps ≤ flowMaxStep and ≤ flowMaxPhase/‖tΩ‖; float64). For n = 1, Ω = 0 and Φ = σ_{t′}/σ_t exactly.
//
// Since d/dτ[Φ(t′,τ)m_τ] = Φ(t′,τ)b(τ), the order-0 step with x̂₀ frozen is exact in closed form:
// u_{t′} = Φu_t + (m_{t′} − Φm_t)x̂₀. The multistep coefficients are
//
//	c_j = ∫_t^{t′} Φ(t′,τ)b(τ)ℓ_j(τ)dτ = R_{t′}∫_t^{t′} R_τ⁻¹b(τ)ℓ_j(τ)dτ,
//	R_τ⁻¹b(τ) = −½g(τ)²·(y_n/L_nn²)·Q_τᵀe_n,   y = L_τ⁻¹m_τ,
//
// by Gauss–Legendre quadrature in log τ (flowGLNodes nodes per piece of at most flowMaxPiece in log τ).

const (
	flowMaxStep  = 0.005 // largest RK4 step of Q's ODE in log t
	flowMaxPhase = 0.01  // largest h·‖tΩ‖ of one RK4 step (tΩ grows like t at large t)
	flowMaxPiece = 0.25  // largest quadrature piece in log t
)

// Gauss–Legendre nodes and weights on [−1, 1], 8 points.
var glNodes = [8]float64{-0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
	0.1834346424956498, 0.5255324099163290, 0.7966664774136267, 0.9602898564975363}
var glWeights = [8]float64{0.1012285362903763, 0.2223810344533745, 0.3137066458778873, 0.3626837833783620,
	0.3626837833783620, 0.3137066458778873, 0.2223810344533745, 0.1012285362903763}

// flowPoint is the kernel and the rotation at one time.
type flowPoint struct {
	t     float64
	l     mat  // Cholesky factor of Σ_t
	sigma mat  // Σ_t
	q     mat  // Q_t (R_t = L_t Q_t)
	m     vecN // m_t, the q0 column of the mean map
}

// flow evaluates R_t at a set of times.
type flow struct {
	sde    *hold.SDE
	n      int
	points map[float64]*flowPoint
}

// kernelAt returns L_t, Σ_t and m_t.
func (f *flow) kernelAt(t float64) (mat, mat, vecN) {
	k := f.sde.Kernel(t)
	var m vecN
	for i := 0; i < f.n; i++ {
		m[i] = k.Mean.At(i, 0)
	}
	return fromHold(&k.Chol, f.n), fromHold(&k.Sigma, f.n), m
}

// driftMatrix returns F_t, the forward drift's matrix at time t (columns from unit states).
func (f *flow) driftMatrix(t float64) (mat, error) {
	n := f.n
	x := make([]float64, n*n)
	for b := 0; b < n; b++ {
		x[b*n+b] = 1
	}
	dst := make([]float64, n*n)
	times := make([]float64, n)
	for i := range times {
		times[i] = t
	}
	if err := f.sde.ForwardDrift(dst, x, times); err != nil {
		return mat{}, err
	}
	var out mat
	for b := 0; b < n; b++ { // row b of dst is F_t e_b: column b
		for i := 0; i < n; i++ {
			out[i][b] = dst[b*n+i]
		}
	}
	return out, nil
}

// rate returns dQ/ds = tΩ(t)Q at time t.
func (f *flow) rate(t float64, q *mat) (mat, error) {
	n := f.n
	l, _, _ := f.kernelAt(t)
	ft, err := f.driftMatrix(t)
	if err != nil {
		return mat{}, err
	}
	linv, err := inverse(&l, n)
	if err != nil {
		return mat{}, fmt.Errorf("kernel factor at t = %g: %w", t, err)
	}
	fl := mul(&ft, &l, n)
	m := mul(&linv, &fl, n)
	g := f.sde.Diffusion(t)
	nn := g * g / (l[n-1][n-1] * l[n-1][n-1])
	var omega mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x := m[i][j] + m[j][i]
			if i == n-1 && j == n-1 {
				x += nn
			}
			half := m[i][j]
			if i == n-1 && j == n-1 {
				half += 0.5 * nn
			}
			switch {
			case i > j:
				half -= x
			case i == j:
				half -= 0.5 * x
			}
			omega[i][j] = t * half
		}
	}
	return mul(&omega, q, n), nil
}

// newFlow integrates Q from the smallest of the given times (Q = I there) through all of them.
func newFlow(sde *hold.SDE, times []float64) (*flow, error) {
	f := &flow{sde: sde, n: sde.Blocks(), points: map[float64]*flowPoint{}}
	ts := slices.Clone(times)
	slices.Sort(ts)
	ts = slices.Compact(ts)
	n := f.n
	q := eye(n)
	add := func(t float64) {
		l, sigma, m := f.kernelAt(t)
		f.points[t] = &flowPoint{t: t, l: l, sigma: sigma, q: q, m: m}
	}
	add(ts[0])
	for k := 1; k < len(ts); k++ {
		s, s1 := math.Log(ts[k-1]), math.Log(ts[k])
		for n > 1 && s < s1 { // n = 1: Ω = 0
			k1, err := f.rate(math.Exp(s), &q)
			if err != nil {
				return nil, err
			}
			h := math.Min(flowMaxStep, flowMaxPhase/math.Max(frobenius(&k1, n), 1e-300))
			if s+h >= s1 || s1-(s+h) < 1e-3*h {
				h = s1 - s
			}
			y := axpby(1, &q, h/2, &k1, n)
			k2, err := f.rate(math.Exp(s+h/2), &y)
			if err != nil {
				return nil, err
			}
			y = axpby(1, &q, h/2, &k2, n)
			k3, err := f.rate(math.Exp(s+h/2), &y)
			if err != nil {
				return nil, err
			}
			y = axpby(1, &q, h, &k3, n)
			k4, err := f.rate(math.Exp(s+h), &y)
			if err != nil {
				return nil, err
			}
			for a := 0; a < n; a++ {
				for b := 0; b < n; b++ {
					q[a][b] += h / 6 * (k1[a][b] + 2*k2[a][b] + 2*k3[a][b] + k4[a][b])
				}
			}
			if h == s1-s {
				break
			}
			s += h
		}
		add(ts[k])
	}
	return f, nil
}

// r returns R_t = L_t Q_t.
func (p *flowPoint) r(n int) mat { return mul(&p.l, &p.q, n) }

// phi returns Φ(t′,t) = R_{t′}R_t⁻¹ = L_{t′}Q_{t′}Q_tᵀL_t⁻¹.
func (f *flow) phi(to, from *flowPoint) (mat, error) {
	n := f.n
	linv, err := inverse(&from.l, n)
	if err != nil {
		return mat{}, fmt.Errorf("kernel factor at t = %g: %w", from.t, err)
	}
	qt := transpose(&from.q, n)
	a := mul(&qt, &linv, n)
	rt := to.r(n)
	return mul(&rt, &a, n), nil
}

// integrand returns R_τ⁻¹b(τ) (see the package notes above).
func (f *flow) integrand(p *flowPoint) vecN {
	n := f.n
	var y vecN
	for i := 0; i < n; i++ { // y = L⁻¹m
		s := p.m[i]
		for k := 0; k < i; k++ {
			s -= p.l[i][k] * y[k]
		}
		y[i] = s / p.l[i][i]
	}
	g := f.sde.Diffusion(p.t)
	lnn := p.l[n-1][n-1]
	c := -0.5 * g * g * y[n-1] / (lnn * lnn)
	var out vecN
	for i := 0; i < n; i++ {
		out[i] = c * p.q[n-1][i] // (Qᵀe_n)_i = Q[n−1][i]
	}
	return out
}

// quadNodes returns the Gauss–Legendre nodes (times) and weights (in log t) on [lo, hi].
func quadNodes(lo, hi float64) (times, weights []float64) {
	s0, s1 := math.Log(lo), math.Log(hi)
	pieces := max(1, int(math.Ceil((s1-s0)/flowMaxPiece)))
	w := (s1 - s0) / float64(pieces)
	for p := range pieces {
		a := s0 + float64(p)*w
		for k, x := range glNodes {
			s := a + w*(x+1)/2
			times = append(times, math.Exp(s))
			weights = append(weights, w/2*glWeights[k])
		}
	}
	return times, weights
}

func frobenius(a *mat, n int) float64 {
	var s float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s += a[i][j] * a[i][j]
		}
	}
	return math.Sqrt(s)
}
