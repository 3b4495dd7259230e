package sample

import (
	"fmt"
	"math"
	"strings"

	"holdgo/hold"
)

// Solvers of the aligned-gauge samplers.
const (
	AlignedDDIM = "ddim" // order 0 (one x̂₀ per step): DDIM
	AlignedDPM2 = "dpm2" // DPM-Solver++(2M)
	AlignedDPM3 = "dpm3" // DPM-Solver++(3M)
	AlignedHeun = "heun" // EDM's Heun step (two x̂₀ per step)
	AlignedODE  = "ode"  // adaptive Dormand–Prince 5(4) on dc/dλ = x̂₀ − c between the grid's ends
	AlignedAnc  = "anc"  // ancestral step: the VE posterior of c′ given c and q0 = x̂₀ (stochastic)
	AlignedSDE2 = "sde2" // DPM-Solver++(2M) SDE, midpoint variant (stochastic)
)

// Aligned is the family of aligned-gauge samplers (gauge.go): the state is reduced at the start of the
// grid to the sufficient statistic c and the constant ancillary components w, c is integrated by a VE
// solver in σ_t (λ = −log σ) with x̂₀ from the score function, and the full state u = m_t c + L_t N_t w
// is rebuilt only to query it. With λ = −log σ the probability-flow ODE is dc/dλ = x̂₀ − c, so
//
//	c(λ′) = e^{−h}c(λ) + ∫_λ^{λ′} e^{−(λ′−s)} x̂₀(s) ds,   h = λ′ − λ,
//
// and the solvers are those of VP/VE diffusion written for α = 1 (Lu et al. 2022, DPM-Solver++):
//
//   - ddim: c′ = e^{−h}c − φ₁D₀ with φ₁ = e^{−h} − 1 and D₀ the x̂₀ of this step;
//   - dpm2 (2M): c′ = e^{−h}c − φ₁D₀ − ½φ₁(D₀ − D₋₁)/r₀, r₀ = h₀/h the ratio of the previous step's h;
//   - dpm3 (3M): c′ = e^{−h}c − φ₁D₀ + φ₂D₁ − φ₃D₂ with DPM-Solver++(3M)'s divided differences D₁, D₂,
//     φ₂ = φ₁/h + 1, φ₃ = φ₂/h − ½; the multistep solvers start with the lower orders;
//   - heun: EDM's second-order step in σ, d = (c − x̂₀)/σ, an Euler predictor to σ′ and the trapezoid;
//   - anc: c′ = x̂₀ + (σ′/σ)²(c − x̂₀) + σ′(1 − (σ′/σ)²)^{1/2} z, the posterior of the VE diffusion in c given
//     q0 = x̂₀ (DDPM's ancestral step; w stays, so the full state keeps the model's marginal);
//   - sde2: DPM-Solver++(2M) SDE (midpoint; Lu et al. 2022, as k-diffusion writes it for VE):
//     c′ = e^{−2h}c + (1 − e^{−2h})D₀ + ½(1 − e^{−2h})(D₀ − D₋₁)/r₀ + σ′(1 − e^{−2h})^{1/2} z;
//   - ode: the probability-flow ODE of the aligned gauge, dc/dλ = x̂₀ − c, by adaptive Dormand–Prince
//     (SolveODE, rtol = atol = Tol) from the grid's first time to its last; only the ends of the grid are
//     used, each evaluation at λ finds its time by bisection on σ_t.
//
// Corrector (the multistep solvers): once the next step's x̂₀ is known (it is needed anyway), the state
// it was evaluated at is recomputed from the previous one with the Lagrange polynomial through the new and
// the previous x̂₀ values in λ (one point more than the predictor used) integrated exactly against
// e^{−(λ′−s)} — UniPC's UniC idea, costing no evaluation; the next step then starts from the corrected
// state with the x̂₀ of the uncorrected one. No corrector follows the last step.
//
// Clip > 0 thresholds every x̂₀ to [−Clip, Clip] (static thresholding, as DDIM and DPM-Solver++ do for
// images whose data range is known: 1 for images scaled to [−1, 1]).
// With Sampler.Denoise the final step is the x̂₀ read-out at the grid's end (one NFE), as for XHat.
type Aligned struct {
	Solver    string
	Corrector bool
	Clip      float64
	// Var is the variable of the multistep polynomial: "" for DPM-Solver++'s formulas in λ, or
	// VarVPTime for the Lagrange polynomial in VP's time τ_VP(σ) integrated exactly against e^{−(λ′−s)}
	// (on GridVPMatched this is, number for number, VP's xdpm2/xdpm3 — x̂₀ extrapolated in t).
	Var string
	Tol float64 // ode: rtol = atol (0: DefaultTol)

	gauges  []gauge // set by prepare, one per grid time
	grid    []float64
	weights [][]float64 // VarVPTime: per step, the weights of x̂₀ at i, i−1, …
}

// VarVPTime is the extrapolation variable τ_VP(σ) of the aligned multistep samplers (Aligned.Var).
const VarVPTime = "vpt"

// Name returns "a-ddim", "a-dpm2", "a-dpm3", "a-heun", with "c" appended when the corrector is on.
func (m Aligned) Name() string {
	name := "a-" + m.Solver
	if m.Var == VarVPTime {
		name = "a-x" + m.Solver
	}
	if m.Corrector {
		name += "c"
	}
	return name
}

func (m Aligned) order() int {
	switch m.Solver {
	case AlignedDPM2, AlignedSDE2:
		return 2
	case AlignedDPM3:
		return 3
	}
	return 1
}

func (m Aligned) check() error {
	switch m.Solver {
	case AlignedDDIM, AlignedDPM2, AlignedDPM3, AlignedHeun, AlignedODE, AlignedAnc, AlignedSDE2:
	default:
		return fmt.Errorf("aligned solver %q, want one of %s", m.Solver,
			strings.Join([]string{AlignedDDIM, AlignedDPM2, AlignedDPM3, AlignedHeun, AlignedODE, AlignedAnc, AlignedSDE2}, ", "))
	}
	stochastic := m.Solver == AlignedAnc || m.Solver == AlignedSDE2
	if stochastic && (m.Corrector || m.Var != "") {
		return fmt.Errorf("the stochastic aligned solver %s takes no corrector and no extrapolation variable", m.Solver)
	}
	if !(m.Tol >= 0) || math.IsInf(m.Tol, 0) {
		return fmt.Errorf("aligned ODE tolerance %g, want ≥ 0", m.Tol)
	}
	if m.Corrector && (m.Solver == AlignedHeun || m.Solver == AlignedODE) {
		return fmt.Errorf("the corrector is for the multistep solvers, not %s", m.Solver)
	}
	if m.Var != "" && (m.Var != VarVPTime || m.Solver == AlignedHeun || m.Solver == AlignedODE) {
		return fmt.Errorf("aligned extrapolation variable %q, want none or %s (multistep solvers)", m.Var, VarVPTime)
	}
	if !(m.Clip >= 0) || math.IsInf(m.Clip, 0) {
		return fmt.Errorf("x̂₀ clip %g, want 0 (off) or a positive bound", m.Clip)
	}
	return nil
}

// prepare evaluates the gauge at every grid time (float64, once per grid).
func (m Aligned) prepare(sde *hold.SDE, grid []float64) (Method, error) {
	if err := m.check(); err != nil {
		return nil, err
	}
	if m.gauges != nil && sameGrid(m.grid, grid) {
		return m, nil
	}
	if m.Solver == AlignedODE { // the adaptive solver uses the grid's ends only
		grid = []float64{grid[0], grid[len(grid)-1]}
	}
	gs := make([]gauge, len(grid))
	for i, t := range grid {
		g, err := newGauge(sde, t)
		if err != nil {
			return nil, err
		}
		if i > 0 && !(g.sigma < gs[i-1].sigma) {
			return nil, fmt.Errorf("sample: %s: the noise level σ does not decrease along the grid (%g at t = %g, %g at t = %g)",
				m.Name(), gs[i-1].sigma, grid[i-1], g.sigma, t)
		}
		gs[i] = g
	}
	m.gauges, m.grid = gs, append([]float64(nil), grid...)
	m.weights = nil
	if m.Var == VarVPTime {
		m.weights = make([][]float64, len(grid)-1)
		for i := range m.weights {
			k := min(m.order(), i+1)
			m.weights[i] = expLagrangeWeights(gs[i].lambda, gs[i+1].lambda, m.nodes(i, k), m.variable())
		}
	}
	return m, nil
}

// variable returns the extrapolation variable as a function of λ: λ itself, or τ_VP(e^{−λ}).
func (m Aligned) variable() func(float64) float64 {
	if m.Var == VarVPTime {
		return func(lam float64) float64 { return vpTimeAt(math.Exp(-lam)) }
	}
	return func(lam float64) float64 { return lam }
}

// nodes returns the extrapolation variable at grid points i, i−1, …, i−k+1.
func (m Aligned) nodes(i, k int) []float64 {
	v := m.variable()
	out := make([]float64, k)
	for j := range out {
		out[j] = v(m.gauges[i-j].lambda)
	}
	return out
}

// alignedRun is one chunk's integration in c.
type alignedRun struct {
	m     Aligned
	r     *run
	x     []float64 // the chunk's states, B×n·d: the rebuilt u of the latest query
	c, w  []float64
	z     []float64 // the stochastic solvers' noise
	batch int
}

// x0 rebuilds the state of c at grid point i (or of another statistic cv), queries x̂₀ into dst and
// clips it.
func (a *alignedRun) x0(dst, cv []float64, i int) error {
	return a.x0At(dst, cv, &a.m.gauges[i])
}

// x0At is x0 at the time of gauge g.
func (a *alignedRun) x0At(dst, cv []float64, g *gauge) error {
	n, d := a.r.blocks(), a.r.d
	g.rebuild(a.x, cv, a.w, n, d, a.batch)
	if err := a.r.evalX0(dst, a.x, a.batch, g.t); err != nil {
		return err
	}
	clip(dst, a.m.Clip)
	return nil
}

// ode integrates dc/dλ = x̂₀ − c from the first grid point to the last with SolveODE.
func (a *alignedRun) ode() error {
	m, r := a.m, a.r
	first, last := &m.gauges[0], &m.gauges[len(m.gauges)-1]
	lo, hi := last.t, first.t
	f := func(lam float64, c, dc []float64) error {
		g := first
		switch lam {
		case first.lambda:
		case last.lambda:
			g = last
		default:
			t, err := TimeAtNoiseLevel(r.sde, math.Exp(-lam), lo, hi)
			if err != nil {
				return err
			}
			ng, err := newGauge(r.sde, t)
			if err != nil {
				return err
			}
			g = &ng
		}
		if err := a.x0At(dc, c, g); err != nil {
			return err
		}
		for i := range dc {
			dc[i] -= c[i]
		}
		return nil
	}
	if _, err := SolveODE(f, first.lambda, last.lambda, a.c, ODEOptions{RTol: m.Tol, ATol: m.Tol}, nil, nil); err != nil {
		return err
	}
	a.offer(len(m.gauges) - 1)
	return nil
}

func (m Aligned) integrate(r *run, x []float64, batch int) error {
	ends := r.grid
	if m.Solver == AlignedODE {
		ends = []float64{r.grid[0], r.grid[len(r.grid)-1]}
	}
	if m.gauges == nil || !sameGrid(m.grid, ends) {
		p, err := m.prepare(r.sde, r.grid)
		if err != nil {
			return err
		}
		m = p.(Aligned)
	}
	n, d := r.blocks(), r.d
	a := &alignedRun{m: m, r: r, x: x, batch: batch,
		c: make([]float64, batch*d), w: make([]float64, batch*(n-1)*d)}
	m.gauges[0].split(a.c, a.w, x, n, d, batch)
	switch m.Solver {
	case AlignedHeun:
		if err := a.heun(); err != nil {
			return err
		}
	case AlignedODE:
		if err := a.ode(); err != nil {
			return err
		}
	default:
		if err := a.multistep(); err != nil {
			return err
		}
	}
	m.gauges[len(m.gauges)-1].rebuild(x, a.c, a.w, n, d, batch)
	return nil
}

// multistep runs ddim, dpm2 and dpm3 with the optional corrector.
func (a *alignedRun) multistep() error {
	m := a.m
	size := len(a.c)
	order := m.order()
	hist := make([][]float64, order+1) // hist[j]: x̂₀ of grid point i−j
	for j := range hist {
		hist[j] = make([]float64, size)
	}
	prev := make([]float64, size) // c at the previous grid point (for the corrector)
	used := 0                     // x̂₀ values in hist
	lastOrder := 0                // points the last predictor step used
	for i := 0; i+1 < len(m.gauges); i++ {
		hist = append(hist[len(hist)-1:], hist[:len(hist)-1]...) // the oldest slot becomes the newest
		if err := a.x0(hist[0], a.c, i); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		used = min(used+1, len(hist))
		if m.Corrector && i > 0 {
			a.correct(prev, hist, i, min(lastOrder+1, used))
		}
		k := min(order, used)
		copy(prev, a.c)
		if m.Solver == AlignedAnc || m.Solver == AlignedSDE2 {
			a.stochastic(hist, i, k)
		} else {
			a.predict(hist, i, k)
		}
		lastOrder = k
		a.offer(i + 1)
	}
	return nil
}

// stochastic advances c from grid point i to i+1 with the ancestral step (k = 1) or DPM-Solver++(2M)
// SDE's second-order correction (k = 2), drawing z from the run's noise source.
func (a *alignedRun) stochastic(hist [][]float64, i, k int) {
	m := a.m
	s, sn := m.gauges[i].sigma, m.gauges[i+1].sigma
	keep := (sn / s) * (sn / s) // e^{−2h}
	mix := -math.Expm1(2 * math.Log(sn/s))
	if a.z == nil {
		a.z = make([]float64, len(a.c))
	}
	a.r.noise.fill(a.z)
	std := sn * math.Sqrt(mix)
	var r0 float64
	if k > 1 {
		lam := m.lambdas(i, 2)
		r0 = (lam[0] - lam[1]) / (m.gauges[i+1].lambda - lam[0])
	}
	for q := range a.c {
		v := keep*a.c[q] + mix*hist[0][q]
		if k > 1 {
			v += 0.5 * mix * (hist[0][q] - hist[1][q]) / r0
		}
		a.c[q] = v + std*a.z[q]
	}
}

// lambdas returns λ at grid points i, i−1, …, i−k+1.
func (m Aligned) lambdas(i, k int) []float64 {
	out := make([]float64, k)
	for j := range out {
		out[j] = m.gauges[i-j].lambda
	}
	return out
}

// predict advances c from grid point i to i+1 with the k-point DPM-Solver++ formula (or the exact
// weights of the polynomial in VP's time).
func (a *alignedRun) predict(hist [][]float64, i, k int) {
	m := a.m
	lam := m.lambdas(i, k)
	h := m.gauges[i+1].lambda - lam[0]
	decay := m.gauges[i+1].sigma / m.gauges[i].sigma // e^{−h}
	phi1 := math.Expm1(-h)
	c := a.c
	if m.weights != nil {
		w := m.weights[i][:k]
		for q := range c {
			v := decay * c[q]
			for j, wj := range w {
				v += wj * hist[j][q]
			}
			c[q] = v
		}
		return
	}
	switch k {
	case 1:
		for q := range c {
			c[q] = decay*c[q] - phi1*hist[0][q]
		}
	case 2:
		r0 := (lam[0] - lam[1]) / h
		for q := range c {
			d1 := (hist[0][q] - hist[1][q]) / r0
			c[q] = decay*c[q] - phi1*hist[0][q] - 0.5*phi1*d1
		}
	default:
		r0, r1 := (lam[0]-lam[1])/h, (lam[1]-lam[2])/h
		phi2 := phi1/h + 1
		phi3 := phi2/h - 0.5
		for q := range c {
			d10 := (hist[0][q] - hist[1][q]) / r0
			d11 := (hist[1][q] - hist[2][q]) / r1
			d1 := d10 + r0/(r0+r1)*(d10-d11)
			d2 := (d10 - d11) / (r0 + r1)
			c[q] = decay*c[q] - phi1*hist[0][q] + phi2*d1 - phi3*d2
		}
	}
}

// correct recomputes c at grid point i from prev (c at i−1) with the k-point Lagrange polynomial in λ
// through x̂₀ at i, i−1, …, i−k+1, integrated exactly against e^{−(λ_i−s)} over [λ_{i−1}, λ_i].
func (a *alignedRun) correct(prev []float64, hist [][]float64, i, k int) {
	m := a.m
	w := expLagrangeWeights(m.gauges[i-1].lambda, m.gauges[i].lambda, m.nodes(i, k), m.variable())
	decay := m.gauges[i].sigma / m.gauges[i-1].sigma
	c := a.c
	for q := range c {
		v := decay * prev[q]
		for j, wj := range w {
			v += wj * hist[j][q]
		}
		c[q] = v
	}
}

// expLagrangeWeights returns W_j = ∫_{lo}^{hi} e^{−(hi−s)} ℓ_j(ν(s)) ds for the Lagrange basis ℓ_j
// through the nodes (values of the variable ν): Gauss–Legendre, 8 nodes on each of expPieces pieces
// (for ν = λ the integrand is a polynomial of degree < 4 times an exponential, exact to rounding for the
// steps of a few units of λ that samplers take; for ν = τ_VP it is smooth).
func expLagrangeWeights(lo, hi float64, nodes []float64, nu func(float64) float64) []float64 {
	const expPieces = 4
	w := make([]float64, len(nodes))
	width := (hi - lo) / expPieces
	for p := range expPieces {
		a := lo + float64(p)*width
		half, mid := 0.5*width, a+0.5*width
		for q, x := range glNodes {
			s := mid + half*x
			f := glWeights[q] * half * math.Exp(-(hi - s))
			v := nu(s)
			for j := range nodes {
				basis := 1.0
				for o := range nodes {
					if o != j {
						basis *= (v - nodes[o]) / (nodes[j] - nodes[o])
					}
				}
				w[j] += f * basis
			}
		}
	}
	return w
}

// heun runs EDM's Heun steps in σ.
func (a *alignedRun) heun() error {
	m := a.m
	size := len(a.c)
	d0, d1 := make([]float64, size), make([]float64, size)
	ce := make([]float64, size)
	for i := 0; i+1 < len(m.gauges); i++ {
		s, sn := m.gauges[i].sigma, m.gauges[i+1].sigma
		if err := a.x0(d0, a.c, i); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		for q := range ce { // Euler: c + (σ′ − σ)(c − D)/σ
			ce[q] = a.c[q] + (sn-s)*(a.c[q]-d0[q])/s
		}
		if err := a.x0(d1, ce, i+1); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		for q := range a.c {
			slope := 0.5 * ((a.c[q]-d0[q])/s + (ce[q]-d1[q])/sn)
			a.c[q] += (sn - s) * slope
		}
		a.offer(i + 1)
	}
	return nil
}

// offer records the rebuilt state at grid point i when the run records it.
func (a *alignedRun) offer(i int) {
	if a.r.rec == nil {
		return
	}
	a.m.gauges[i].rebuild(a.x, a.c, a.w, a.r.blocks(), a.r.d, a.batch)
	a.r.rec.offer(a.m.grid[i], a.x)
}

// readout replaces the data block by the (clipped) x̂₀ at the grid's end: the sampler's final answer.
func (m Aligned) readout(r *run, x []float64, batch int) error {
	return XHat{Clip: m.Clip}.readout(r, x, batch)
}
