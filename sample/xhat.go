package sample

import (
	"errors"
	"fmt"
	"math"

	"holdgo/hold"
)

// X0Predictor gives the data prediction x̂₀ = E[q0 | x_t] (B×d) for states x (B×n·d) at per-sample
// times t directly. hold.MixtureOracle implements it exactly; any other Scorer gets x̂₀ from its
// last-block score (see XHat). One call counts as one score evaluation.
type X0Predictor interface {
	PredictX0(dst, x, t []float64) error
}

// Extrapolation variables of the multistep x̂₀ samplers: the Lagrange polynomial through the last
// x̂₀ values is a polynomial in t (the default: on the 1-D mixture it beats log t at every NFE, e.g.
// HOLD xdpm2 at NFE 20 on the quadratic grid W1 14e-3 against 40e-3; docs/samplers.md) or in log t.
const (
	VarLogT = "logt"
	VarT    = "t"
)

// XHat is the family of x̂₀ (data-prediction) exponential-integrator samplers for any linear SDE of
// hold (docs/math.md#data-prediction-integrators; flow.go has the maths): per step from t to t′ one x̂₀ evaluation, the
// linear part A solved exactly through its flow Φ(t′,t), and
//
//   - Points = 1 ("xddim"): u_{t′} = Φu_t + (m_{t′} − Φm_t)x̂₀(u_t, t), exact for point-mass data,
//     DDIM for VP;
//   - Points = 2, 3 ("xdpm2", "xdpm3"): x̂₀ extrapolated by the Lagrange polynomial (in Var) through
//     the last Points evaluations (fewer on the first steps: warm start), u_{t′} = Φu_t + Σ_j c_j x̂₀_j
//     with c_j = ∫Φ(t′,τ)b(τ)ℓ_j(τ)dτ precomputed per grid (DPM-Solver++(kM)-like);
//   - Stochastic ("xanc"): the Gaussian posterior of u_{t′} given u_t and q0 = x̂₀ for Eta = 1,
//     u_{t′} = m_{t′}x̂₀ + K(u_t − m_tx̂₀) + η·chol(C)z with C = Σ′ − Σ′ΨᵀΣ_t⁻¹ΨΣ′, Ψ = Ψ(t←t′); for
//     η < 1 the DDIM family between it and xddim: K = L_ηU_ηR_t⁻¹, L_η = chol(Σ′ − η²C) and U_η the
//     orthogonal polar factor of L_η⁻¹((1−η)R_{t′} + ηΣ′ΨᵀL_t⁻ᵀQ_t). K keeps the marginal covariance
//     (KΣ_tKᵀ + η²C = Σ′), equals Φ at η = 0 and Σ′ΨᵀΣ_t⁻¹ at η = 1.
//
// With Sampler.Denoise the final step is the x̂₀ read-out at the grid's end: q ← x̂₀(u, ε) (one NFE).
// x̂₀ comes from an X0Predictor, or from the last-block score S as x̂₀ = (S + rᵀu)/(rᵀm_t) with
// r = Σ_t⁻¹e_n (docs/math.md#x0-from-the-score).
type XHat struct {
	Points     int     // 1, 2 or 3 x̂₀ values per step (0 means 1)
	Stochastic bool    // the posterior step (Points must be 1)
	Eta        float64 // in [0, 1], stochastic only
	Var        string  // VarT (default "") or VarLogT
	Clip       float64 // > 0: every x̂₀ thresholded to [−Clip, Clip] (Options.Clip)

	tab *xTables // set by prepare
}

// Name returns "xddim", "xdpm2", "xdpm3" or "xanc".
func (m XHat) Name() string {
	switch {
	case m.Stochastic:
		return "xanc"
	case m.Points >= 2:
		return fmt.Sprintf("xdpm%d", m.Points)
	}
	return "xddim"
}

func (m XHat) points() int { return max(1, m.Points) }

func (m XHat) check() error {
	switch {
	case m.Points < 0 || m.Points > 3:
		return fmt.Errorf("x̂₀ sampler with %d points, want 1, 2 or 3", m.Points)
	case m.Stochastic && m.points() != 1:
		return errors.New("the stochastic x̂₀ step takes one point")
	case !(m.Eta >= 0 && m.Eta <= 1):
		return fmt.Errorf("eta %g, want it in [0, 1]", m.Eta)
	case m.Var != "" && m.Var != VarLogT && m.Var != VarT:
		return fmt.Errorf("extrapolation variable %q, want logt or t", m.Var)
	case !(m.Clip >= 0) || math.IsInf(m.Clip, 0):
		return fmt.Errorf("x̂₀ clip %g, want 0 (off) or a positive bound", m.Clip)
	}
	return nil
}

// xStep holds one step's coefficients (per data dimension): u′ = lin·u + Σ_j coef[j]·x̂₀_j (+ noise·z).
type xStep struct {
	lin   mat
	coef  []vecN // coef[j] multiplies x̂₀ from j steps back
	noise mat    // lower factor of the noise covariance (stochastic only)
}

type xTables struct {
	grid  []float64
	steps []xStep
}

// prepare computes the step coefficients for a grid (float64, once per grid).
func (m XHat) prepare(sde *hold.SDE, grid []float64) (Method, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if m.tab != nil && sameGrid(m.tab.grid, grid) {
		return m, nil
	}
	tab, err := m.tables(sde, grid)
	if err != nil {
		return nil, fmt.Errorf("sample: %s coefficients: %w", m.Name(), err)
	}
	m.tab = tab
	return m, nil
}

func sameGrid(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (m XHat) lambda(t float64) float64 {
	if m.Var == VarLogT {
		return math.Log(t)
	}
	return t
}

func (m XHat) tables(sde *hold.SDE, grid []float64) (*xTables, error) {
	n := sde.Blocks()
	times := append([]float64(nil), grid...)
	type nodeSet struct{ t, w []float64 }
	nodes := make([]nodeSet, len(grid)-1)
	if m.points() > 1 {
		for i := range nodes {
			nodes[i].t, nodes[i].w = quadNodes(grid[i+1], grid[i])
			times = append(times, nodes[i].t...)
		}
	}
	fl, err := newFlow(sde, times)
	if err != nil {
		return nil, err
	}
	tab := &xTables{grid: append([]float64(nil), grid...), steps: make([]xStep, len(grid)-1)}
	for i := range tab.steps {
		from, to := fl.points[grid[i]], fl.points[grid[i+1]]
		phi, err := fl.phi(to, from)
		if err != nil {
			return nil, err
		}
		st := &tab.steps[i]
		st.lin = phi
		pm := mulVec(&phi, from.m, n)
		var d0 vecN
		for k := 0; k < n; k++ {
			d0[k] = to.m[k] - pm[k]
		}
		k := min(m.points(), i+1)
		if k == 1 {
			st.coef = []vecN{d0}
		} else {
			st.coef = m.multistepCoef(fl, grid, i, k, nodes[i].t, nodes[i].w, to)
		}
		if m.Stochastic && m.Eta > 0 {
			if err := m.posterior(sde, st, from, to); err != nil {
				return nil, fmt.Errorf("step %d (t = %g → %g): %w", i, grid[i], grid[i+1], err)
			}
		}
	}
	return tab, nil
}

// multistepCoef returns c_j = R_{t′}∫_t^{t′}R_τ⁻¹b(τ)ℓ_j(τ)dτ for the k points t_i, t_{i−1}, ….
func (m XHat) multistepCoef(fl *flow, grid []float64, i, k int, ts, ws []float64, to *flowPoint) []vecN {
	n := fl.n
	lams := make([]float64, k)
	for j := range lams {
		lams[j] = m.lambda(grid[i-j])
	}
	integral := make([]vecN, k)
	for q, tau := range ts {
		v := fl.integrand(fl.points[tau])
		lam := m.lambda(tau)
		for j := range k {
			basis := 1.0
			for o := range k {
				if o != j {
					basis *= (lam - lams[o]) / (lams[j] - lams[o])
				}
			}
			// ∫_t^{t′}·dτ = −∫_{t′}^{t}·τ ds
			f := -ws[q] * tau * basis
			for a := 0; a < n; a++ {
				integral[j][a] += f * v[a]
			}
		}
	}
	r := to.r(n)
	out := make([]vecN, k)
	for j := range out {
		out[j] = mulVec(&r, integral[j], n)
	}
	return out
}

// posterior sets the stochastic step's K, x̂₀ coefficient m′ − Km_t and noise factor, in the array
// (square-root) form that stays accurate down to t_min, where Σ′ and Σ_t have condition numbers of
// 1e13 and more and Σ′ − η²C, formed and factored as a matrix, loses its last pivots to rounding.
//
// Given q0, u_{t′} = L′ξ and u_t = ΨL′ξ + L_Nζ with (ξ, ζ) ~ N(0, I_{2n}), L′ the kernel's Cholesky
// factor at t′ and L_N the forward noise factor of the step. The Householder factorisation of the
// 2n×n matrix X = [L′ᵀΨᵀ; L_Nᵀ] = QR (Q orthogonal 2n×2n, R₁ its upper n×n block) gives u_t =
// L̂·Q[:, :n]ᵀ(ξ, ζ) with L̂ = R₁ᵀ the Cholesky factor of Σ_t = ΨΣ′Ψᵀ + L_NL_Nᵀ, and, completing
// (ξ, ζ) by the last n columns of Q, the exact posterior
//
//	u_{t′} = m′q0 + L′Q₁₁L̂⁻¹(u_t − m_tq0) + L′Q₁₂z,   Q₁₁ = Q[:n, :n], Q₁₂ = Q[:n, n:],
//
// so K₁ = L′Q₁₁L̂⁻¹ and C = L′Q₁₂Q₁₂ᵀL′ᵀ with Q₁₁Q₁₁ᵀ + Q₁₂Q₁₂ᵀ = I: no covariance is ever formed
// or inverted. For η < 1 the same quantities whitened by L′ and L̂: Σ′ − η²C = L′SSᵀL′ᵀ with
// S = chol(I − η²Q₁₂Q₁₂ᵀ) (eigenvalues in [1 − η², 1]), U_η the polar factor of
// S⁻¹((1−η)Q_{t′} + ηQ₁₁Q̃_t), Q̃_t = L̂⁻¹R_t, and K = L′SU_ηQ̃_t⁻¹L̂⁻¹ (= L_ηU_ηR_t⁻¹ of the type's
// notes). The noise factor ηL′Q₁₂ is made lower triangular as ηL′R₀ᵀ with Q₁₂ᵀ = Q₀R₀.
func (m XHat) posterior(sde *hold.SDE, st *xStep, from, to *flowPoint) error {
	n := sde.Blocks()
	a := sde.AStep(from.t, from.t-to.t)
	// Ψ(t←t′) = D·ExpA·D and the forward noise factor L_N = D·CholA·D (see hold.SDE.AStep).
	var psi, ln mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			sgn := 1.0
			if (i+j)%2 == 1 {
				sgn = -1
			}
			psi[i][j] = sgn * a.ExpA.At(i, j)
			ln[i][j] = sgn * a.CholA.At(i, j)
		}
	}
	pl := mul(&psi, &to.l, n) // ΨL′
	var x tall
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			x[i][j], x[n+i][j] = pl[j][i], ln[j][i]
		}
	}
	q, r := householderQR(&x, 2*n, n)
	var q11, q12, lHat mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			q11[i][j], q12[i][j], lHat[i][j] = q[i][j], q[i][n+j], r[j][i]
		}
	}
	lHatInv, err := lowerInverse(&lHat, n)
	if err != nil {
		return fmt.Errorf("the factor of Σ_t: %w", err)
	}
	white := q11 // K in whitened coordinates: K = L′·white·L̂⁻¹
	if m.Eta < 1 {
		eta2 := m.Eta * m.Eta
		qq := transpose(&q12, n)
		qq = mul(&q12, &qq, n)
		id := eye(n)
		b := axpby(1, &id, -eta2, &qq, n)
		s := cholesky(&b, n)
		sInv, err := lowerInverse(&s, n)
		if err != nil {
			return fmt.Errorf("Σ′ − η²C is singular: %w", err)
		}
		rt := from.r(n)
		qt := mul(&lHatInv, &rt, n) // Q̃_t = L̂⁻¹R_t, orthogonal up to the kernel's and the step's rounding
		target := mul(&q11, &qt, n)
		target = axpby(1-m.Eta, &to.q, m.Eta, &target, n)
		z := mul(&sInv, &target, n)
		u, err := polar(&z, n)
		if err != nil {
			return err
		}
		qtInv, err := inverse(&qt, n)
		if err != nil {
			return err
		}
		white = mul(&s, &u, n)
		white = mul(&white, &qtInv, n)
	}
	k := mul(&to.l, &white, n)
	k = mul(&k, &lHatInv, n)
	km := mulVec(&k, from.m, n)
	var coef vecN
	for i := 0; i < n; i++ {
		coef[i] = to.m[i] - km[i]
	}
	var y tall // Q₁₂ᵀ = Q₀R₀, so L′Q₁₂ = L′R₀ᵀQ₀ᵀ and L′R₀ᵀ (lower triangular) is a factor of C
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			y[i][j] = q12[j][i]
		}
	}
	_, r0 := householderQR(&y, n, n)
	var r0T mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			r0T[i][j] = m.Eta * r0[j][i]
		}
	}
	st.lin, st.coef, st.noise = k, []vecN{coef}, mul(&to.l, &r0T, n)
	return nil
}

func (m XHat) integrate(r *run, x []float64, batch int) error {
	if m.tab == nil || !sameGrid(m.tab.grid, r.grid) {
		p, err := m.prepare(r.sde, r.grid)
		if err != nil {
			return err
		}
		m = p.(XHat)
	}
	n, d := r.blocks(), r.d
	hist := make([][]float64, m.points()) // hist[j]: x̂₀ from j steps back
	for j := range hist {
		hist[j] = make([]float64, batch*d)
	}
	var z []float64
	if m.Stochastic && m.Eta > 0 {
		z = make([]float64, batch*n*d)
	}
	for i, st := range m.tab.steps {
		hist = append(hist[len(hist)-1:], hist[:len(hist)-1]...) // rotate: the oldest becomes the newest slot
		if err := r.evalX0(hist[0], x, batch, r.grid[i]); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		clip(hist[0], m.Clip)
		if z != nil {
			r.noise.fill(z)
		}
		for b := 0; b < batch; b++ {
			row := x[b*n*d : (b+1)*n*d]
			for dim := 0; dim < d; dim++ {
				var u vecN
				for k := 0; k < n; k++ {
					u[k] = row[k*d+dim]
				}
				out := mulVec(&st.lin, u, n)
				for j, c := range st.coef {
					x0 := hist[j][b*d+dim]
					for k := 0; k < n; k++ {
						out[k] += c[k] * x0
					}
				}
				if z != nil {
					var e vecN
					for k := 0; k < n; k++ {
						e[k] = z[b*n*d+k*d+dim]
					}
					e = mulVec(&st.noise, e, n)
					for k := 0; k < n; k++ {
						out[k] += e[k]
					}
				}
				for k := 0; k < n; k++ {
					row[k*d+dim] = out[k]
				}
			}
		}
		r.rec.offer(r.grid[i+1], x)
	}
	return nil
}

// readout replaces the data block by x̂₀(u, ε) at the grid's end (the x̂₀ samplers' denoising step).
func (m XHat) readout(r *run, x []float64, batch int) error {
	n, d := r.blocks(), r.d
	x0 := make([]float64, batch*d)
	if err := r.evalX0(x0, x, batch, r.grid[len(r.grid)-1]); err != nil {
		return fmt.Errorf("sample: x̂₀ read-out: %w", err)
	}
	clip(x0, m.Clip)
	for b := 0; b < batch; b++ {
		copy(x[b*n*d:b*n*d+d], x0[b*d:(b+1)*d])
	}
	return nil
}

// clip thresholds v to [−bound, bound] in place; bound 0 leaves it.
func clip(v []float64, bound float64) {
	if bound > 0 {
		for i, x := range v {
			v[i] = math.Max(-bound, math.Min(bound, x))
		}
	}
}

// evalX0 writes x̂₀(x, t) (B×d) into dst and counts one NFE.
func (r *run) evalX0(dst, x []float64, batch int, t float64) error {
	times := r.times[:batch]
	for i := range times {
		times[i] = t
	}
	if err := predictX0(r.sde, r.score, dst, x[:batch*r.blocks()*r.d], times, r.scores[:batch*r.d]); err != nil {
		return fmt.Errorf("x̂₀ at t = %g: %w", t, err)
	}
	r.nfe++
	return nil
}

// PredictX0 writes the data prediction x̂₀ = E[q0 | x_t] (B×d) of a score function for the states x
// (B×n·d) at the per-sample times t: directly from an X0Predictor, otherwise from the last-block score
// S as x̂₀ = (S + rᵀu)/(rᵀm_t) with r = Σ_t⁻¹e_n (docs/math.md#x0-from-the-score: Σ_t does not depend on the data, so
// ∇log p_t(u) = −Σ_t⁻¹(u − m_t x̂₀) and its last component fixes x̂₀).
func PredictX0(sde *hold.SDE, score hold.Scorer, dst, x, t []float64) error {
	if len(t) == 0 || len(dst)%len(t) != 0 || len(x) != len(dst)*sde.Blocks() {
		return fmt.Errorf("sample: x̂₀: %d destinations, %d state values and %d times do not match (n = %d)", len(dst), len(x), len(t), sde.Blocks())
	}
	return predictX0(sde, score, dst, x, t, make([]float64, len(dst)))
}

// predictX0 is PredictX0 with the score's scratch (B×d) given.
func predictX0(sde *hold.SDE, score hold.Scorer, dst, x, times, sc []float64) error {
	if p, ok := score.(X0Predictor); ok {
		return p.PredictX0(dst, x, times)
	}
	if err := score.Score(sc, x, times); err != nil {
		return err
	}
	n, batch := sde.Blocks(), len(times)
	d := len(dst) / batch
	var (
		w  vecN
		rm float64
	)
	for b := 0; b < batch; b++ {
		if b == 0 || times[b] != times[b-1] {
			w, rm = lastRow(sde, times[b])
		}
		row := x[b*n*d : (b+1)*n*d]
		for dim := 0; dim < d; dim++ {
			ru := 0.0
			for i := 0; i < n; i++ {
				ru += w[i] * row[i*d+dim]
			}
			dst[b*d+dim] = (sc[b*d+dim] + ru) / rm
		}
	}
	return nil
}

// lastRow returns r = Σ_t⁻¹e_n and rᵀm_t (m_t the q0 column of the mean map): the last row of the
// inverse covariance, through the Cholesky factor (Σ⁻¹e_n = L⁻ᵀL⁻¹e_n, L⁻¹e_n = e_n/L_nn).
func lastRow(sde *hold.SDE, t float64) (vecN, float64) {
	n := sde.Blocks()
	k := sde.Kernel(t)
	l := fromHold(&k.Chol, n)
	var w vecN
	w[n-1] = 1 / l[n-1][n-1]
	for i := n - 1; i >= 0; i-- {
		s := w[i]
		for q := i + 1; q < n; q++ {
			s -= l[q][i] * w[q]
		}
		w[i] = s / l[i][i]
	}
	var rm float64
	for i := 0; i < n; i++ {
		rm += w[i] * k.Mean.At(i, 0)
	}
	return w, rm
}
