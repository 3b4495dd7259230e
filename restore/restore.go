package restore

import (
	"errors"
	"fmt"
	"math"

	"holdgo/hold"
	"holdgo/rng"
	"holdgo/sample"
)

// Method names.
const (
	MethodNone    = "none"    // no conditioning (the denoise task's exact start does it all)
	MethodExact   = "exact"   // the exact conditional denoiser E[q0 | c, y] of an oracle posterior
	MethodReplace = "replace" // replacement of the measured pixels (masks), as a shift along m_t
	MethodRepaint = "repaint" // replacement with RePaint's resampling (undo in c)
	MethodDDNM    = "ddnm"    // DDNM+ as an aligned step
	MethodPiGDM   = "pigdm"   // ΠGDM: one VJP per step
	MethodDPS     = "dps"     // DPS: one VJP per step, a correction of c
)

// MethodNames lists the methods in the order of the documentation.
var MethodNames = []string{MethodNone, MethodExact, MethodReplace, MethodRepaint, MethodDDNM, MethodPiGDM, MethodDPS}

// Solvers of c between grid points (the methods other than ddnm; restoration.md §2, the aligned gauge's
// steps of sample.Aligned).
const (
	StepAnc  = "anc"  // ancestral: c′ = x̂₀ + (σ′/σ)²(c − x̂₀) + σ′(1 − (σ′/σ)²)^{1/2} z
	StepDDIM = "ddim" // c′ = (σ′/σ)c + (1 − σ′/σ)x̂₀
	StepSDE2 = "sde2" // DPM-Solver++(2M) SDE, midpoint variant (not with repaint)
)

// DefaultEta is DDNM+'s η.
const DefaultEta = 0.85

// Method is a restoration method and its parameters.
type Method struct {
	Name     string
	Step     string  // StepAnc (""), StepDDIM or StepSDE2; ddnm takes its own step
	Eta      float64 // ddnm: η in [0, 1] (DefaultEta is the paper's)
	Resample int     // repaint: r ≥ 1 passes over every block of Jump steps
	Jump     int     // repaint: j ≥ 1 steps per block
	DPSScale float64 // dps: ζ > 0
	PiGDMVar float64 // pigdm: the data's per-pixel variance v > 0 (1 in ΠGDM)
	Clip     float64 // > 0: x̂₀ thresholded to [−Clip, Clip] before any conditioning
}

func (m Method) step() string {
	if m.Step == "" {
		return StepAnc
	}
	return m.Step
}

// Check reports the first invalid parameter.
func (m Method) Check() error {
	switch m.step() {
	case StepAnc, StepDDIM, StepSDE2:
	default:
		return fmt.Errorf("restore: step %q, want %s, %s or %s", m.Step, StepAnc, StepDDIM, StepSDE2)
	}
	if !(m.Clip >= 0) || math.IsInf(m.Clip, 0) {
		return fmt.Errorf("restore: x̂₀ clip %g, want 0 (off) or a positive bound", m.Clip)
	}
	switch m.Name {
	case MethodNone, MethodExact, MethodReplace:
	case MethodRepaint:
		if m.Resample < 1 || m.Jump < 1 {
			return fmt.Errorf("restore: repaint needs --resample ≥ 1 and --jump ≥ 1, got %d and %d", m.Resample, m.Jump)
		}
		if m.step() == StepSDE2 {
			return errors.New("restore: repaint's undo breaks the multistep history of sde2: use anc or ddim")
		}
	case MethodDDNM:
		if !(m.Eta >= 0 && m.Eta <= 1) {
			return fmt.Errorf("restore: DDNM+'s η = %g, want it in [0, 1]", m.Eta)
		}
	case MethodPiGDM:
		if !(m.PiGDMVar > 0) || math.IsInf(m.PiGDMVar, 0) {
			return fmt.Errorf("restore: ΠGDM's data variance %g, want a positive value", m.PiGDMVar)
		}
	case MethodDPS:
		if !(m.DPSScale > 0) || math.IsInf(m.DPSScale, 0) {
			return fmt.Errorf("restore: DPS scale ζ = %g, want a positive value", m.DPSScale)
		}
	default:
		return fmt.Errorf("restore: unknown method %q (want one of %v)", m.Name, MethodNames)
	}
	return nil
}

// CheckOperator reports why the method cannot run with the operator op: replacement and RePaint need
// a mask (every singular value 1, A⁺ = Aᵀ; the identity is one).
func (m Method) CheckOperator(op Operator) error {
	if m.Name == MethodReplace || m.Name == MethodRepaint {
		for _, s := range op.Singular() {
			if s != 1 {
				return errors.New("restore: replacement needs a mask (A⁺ = Aᵀ); use ddnm, pigdm or dps for this task")
			}
		}
	}
	return nil
}

// Problem is one image's measurement.
type Problem struct {
	Op     Operator
	Y      []float64 // A q0 + σ_y n (Op.Rows() values)
	SigmaY float64
	// Exact is the score of the posterior p(q0 | y) (an oracle, e.g. a GaussianOracle of
	// GaussianPosterior), for MethodExact only.
	Exact hold.Scorer
}

// Noise supplies the standard normal draws of a run: Fill writes draw number draw (0, 1, … in the
// order the run asks) of problem p's K samples (K×d values).
type Noise interface {
	Fill(dst []float64, problem, draw int)
}

// PhiloxNoise draws problem p's numbers from stream StreamMethod (step = draw) keyed by
// sample.ChunkSeed(Seed, Images[p]): float32 normals widened to float64, element k·d + i for sample k.
type PhiloxNoise struct {
	Seed   uint64
	Images []int
}

// Fill implements Noise.
func (p PhiloxNoise) Fill(dst []float64, problem, draw int) {
	buf := make([]float32, len(dst))
	rng.Stream{Key: sample.ChunkSeed(p.Seed, p.Images[problem]), Step: uint32(draw), ID: StreamMethod}.FillNormal(buf)
	for i, v := range buf {
		dst[i] = float64(v)
	}
}

// PriorStates returns the prior states of K samples of each image (images×K rows of n·d values):
// image i's rows are block k's PriorStd(k) times the float32 normals of stream rng.StreamPrior keyed by
// sample.ChunkSeed(seed, i) (element s·n·d + k·d + j for sample s), which is what package sample draws
// for a chunk of K samples with that key.
func PriorStates(sde *hold.SDE, d, k int, seed uint64, images []int) []float64 {
	n := sde.Blocks()
	u := make([]float64, len(images)*k*n*d)
	buf := make([]float32, k*n*d)
	for p, img := range images {
		rng.Stream{Key: sample.ChunkSeed(seed, img), ID: rng.StreamPrior}.FillNormal(buf)
		row := u[p*k*n*d:]
		for s := range k {
			for blk := range n {
				std := sde.PriorStd(blk)
				for j := range d {
					e := s*n*d + blk*d + j
					row[e] = std * float64(buf[e])
				}
			}
		}
	}
	return u
}

// DenoiseStates returns the exact start of denoising (restoration.md §2, "Denoising is exact"): with
// A = I, y = q0 + σ_y n is exactly the sufficient statistic c at noise level σ_y, so the states
// u = m_t y + L_tN_t w at the time t where NoiseLevel is σ_y, with w ~ N(0, I) (the float32 normals of
// stream rng.StreamPrior keyed by sample.ChunkSeed(seed, image)), have the law of the model's state at t
// given y. ys holds one y (d values) per image; K samples each.
func DenoiseStates(sde *hold.SDE, t float64, ys [][]float64, d, k int, seed uint64, images []int) ([]float64, error) {
	gs, err := gaugeSDE(sde)
	if err != nil {
		return nil, err
	}
	g, err := newGauge(gs, t)
	if err != nil {
		return nil, err
	}
	n := sde.Blocks()
	u := make([]float64, len(ys)*k*n*d)
	c := make([]float64, k*d)
	w := make([]float64, k*(n-1)*d)
	buf := make([]float32, len(w))
	for p, y := range ys {
		if len(y) != d {
			return nil, fmt.Errorf("restore: denoise start: image %d has %d measurements, want %d", images[p], len(y), d)
		}
		for s := range k {
			copy(c[s*d:(s+1)*d], y)
		}
		rng.Stream{Key: sample.ChunkSeed(seed, images[p]), ID: rng.StreamPrior}.FillNormal(buf)
		for i, v := range buf {
			w[i] = float64(v)
		}
		g.rebuild(u[p*k*n*d:(p+1)*k*n*d], c, w, d, k)
	}
	return u, nil
}

// Restorer runs a restoration method on an SDE of the family in the aligned gauge.
type Restorer struct {
	SDE    *hold.SDE
	Score  hold.Scorer // the prior's score; a sample.DivScorer for pigdm and dps
	Method Method
	Grid   []float64 // forward times, decreasing σ (a σ-grid: sample.NewSigmaGrid)
	Dim    int       // d
}

// Stats counts a run's network work: NFE forward evaluations (the read-out included) and VJP
// vector–Jacobian products (each about two forwards), per sample.
type Stats struct {
	NFE, VJP int
}

// run is one Run's state.
type run struct {
	r       *Restorer
	probs   []Problem
	k, d, n int
	batch   int
	noise   Noise
	draw    int
	gauges  []gauge
	times   []float64
	stats   Stats
	div     sample.DivScorer
	hist    []float64 // sde2: the previous step's x̂₀
	hasHist bool
}

// Run restores K samples of every problem from the states u (len(problems)·K rows of n·d values at
// Grid[0]; problem p owns rows p·K … p·K + K − 1), changing u in place, and returns the read-out
// x̂₀′ at the grid's end (len(problems)·K rows of d values) and the work done.
func (r *Restorer) Run(u []float64, problems []Problem, k int, noise Noise) ([]float64, Stats, error) {
	ru, err := r.newRun(u, problems, k, noise)
	if err != nil {
		return nil, Stats{}, err
	}
	steps := len(r.Grid) - 1
	if r.Method.Name == MethodRepaint {
		for b := 0; b < steps; b += r.Method.Jump {
			e := min(b+r.Method.Jump, steps)
			for rep := range r.Method.Resample {
				for i := b; i < e; i++ {
					if err := ru.down(u, i); err != nil {
						return nil, ru.stats, err
					}
				}
				if rep+1 < r.Method.Resample {
					for i := e - 1; i >= b; i-- {
						ru.undo(u, i)
					}
				}
			}
		}
	} else {
		for i := range steps {
			if err := ru.down(u, i); err != nil {
				return nil, ru.stats, err
			}
		}
	}
	out, err := ru.readout(u)
	return out, ru.stats, err
}

func (r *Restorer) newRun(u []float64, problems []Problem, k int, noise Noise) (*run, error) {
	m := r.Method
	if err := m.Check(); err != nil {
		return nil, err
	}
	if r.SDE == nil || r.Dim < 1 || k < 1 || len(problems) == 0 || noise == nil {
		return nil, errors.New("restore: a restorer needs an SDE, d ≥ 1, K ≥ 1, problems and a noise source")
	}
	if r.Score == nil && m.Name != MethodExact {
		return nil, errors.New("restore: the restorer has no score")
	}
	if len(r.Grid) < 2 {
		return nil, errors.New("restore: the grid needs at least one step")
	}
	n, d := r.SDE.Blocks(), r.Dim
	ru := &run{r: r, probs: problems, k: k, d: d, n: n, batch: len(problems) * k, noise: noise}
	if len(u) != ru.batch*n*d {
		return nil, fmt.Errorf("restore: %d state values for %d problems × %d samples × %d blocks × %d", len(u), len(problems), k, n, d)
	}
	for p, pr := range problems {
		if pr.Op == nil || pr.Op.Dim() != d || len(pr.Y) != pr.Op.Rows() || !(pr.SigmaY >= 0) {
			return nil, fmt.Errorf("restore: problem %d: an operator on %d values, %d measurements and σ_y ≥ 0 are needed", p, d, len(pr.Y))
		}
		if m.Name == MethodExact && pr.Exact == nil {
			return nil, fmt.Errorf("restore: problem %d: the exact method needs the posterior's oracle", p)
		}
		if err := m.CheckOperator(pr.Op); err != nil {
			return nil, err
		}
	}
	if m.Name == MethodPiGDM || m.Name == MethodDPS {
		div, ok := r.Score.(sample.DivScorer)
		if !ok {
			return nil, fmt.Errorf("restore: %s needs a score with vector–Jacobian products", m.Name)
		}
		ru.div = div
	}
	gs, err := gaugeSDE(r.SDE)
	if err != nil {
		return nil, err
	}
	ru.gauges = make([]gauge, len(r.Grid))
	for i, t := range r.Grid {
		if ru.gauges[i], err = newGauge(gs, t); err != nil {
			return nil, err
		}
		if i > 0 && !(ru.gauges[i].sigma < ru.gauges[i-1].sigma) {
			return nil, fmt.Errorf("restore: σ does not decrease along the grid at step %d (t = %g)", i, t)
		}
	}
	ru.times = make([]float64, ru.batch)
	return ru, nil
}

// fill draws the next standard normals for every problem (B×d).
func (ru *run) fill(z []float64) {
	kd := ru.k * ru.d
	for p := range ru.probs {
		ru.noise.Fill(z[p*kd:(p+1)*kd], p, ru.draw)
	}
	ru.draw++
}

// rows returns problem p's rows of a B×width buffer.
func (ru *run) rows(v []float64, p, width int) []float64 {
	return v[p*ru.k*width : (p+1)*ru.k*width]
}

// x0 writes the (clipped) x̂₀ of the states u at grid point i into dst and, when raw is not nil, the
// unclipped values; the exact method asks each problem's posterior oracle.
func (ru *run) x0(dst, raw, u []float64, i int) error {
	t := ru.gauges[i].t
	for b := range ru.times {
		ru.times[b] = t
	}
	ru.stats.NFE++
	if ru.r.Method.Name == MethodExact {
		nd := ru.n * ru.d
		for p, pr := range ru.probs {
			if err := sample.PredictX0(ru.r.SDE, pr.Exact, ru.rows(dst, p, ru.d), ru.rows(u, p, nd), ru.times[:ru.k]); err != nil {
				return fmt.Errorf("restore: exact x̂₀ at t = %g: %w", t, err)
			}
		}
		return nil
	}
	if err := sample.PredictX0(ru.r.SDE, ru.r.Score, dst, u, ru.times); err != nil {
		return fmt.Errorf("restore: x̂₀ at t = %g: %w", t, err)
	}
	if raw != nil {
		copy(raw, dst)
	}
	if c := ru.r.Method.Clip; c > 0 {
		for j, v := range dst {
			dst[j] = math.Max(-c, math.Min(c, v))
		}
	}
	return nil
}

// vjpC writes gᵀ∂x̂₀/∂c (B×d) at grid point i for the cotangents g on the clipped x̂₀ (zeroed where the
// clip saturates: a clamp passes no gradient), through one ScoreVJP of the network.
func (ru *run) vjpC(dst, u, g, raw []float64, i int) error {
	if c := ru.r.Method.Clip; c > 0 {
		for j, v := range raw {
			if math.Abs(v) > c {
				g[j] = 0
			}
		}
	}
	v := make([]float64, len(u))
	if err := ru.div.ScoreVJP(nil, v, u, g, ru.times); err != nil {
		return fmt.Errorf("restore: VJP at t = %g: %w", ru.gauges[i].t, err)
	}
	ru.stats.VJP++
	ru.gauges[i].pullBack(dst, v, g, ru.d, ru.batch)
	return nil
}

// pigdm replaces x̂₀ by ΠGDM's x̂₀ + σ²·Jᵀ Aᵀ(r²AAᵀ + σ_y²I)⁻¹(y − Ax̂₀), r² = vσ²/(v + σ²)
// (restoration.md §2(b)), J = ∂x̂₀/∂c through one VJP.
func (ru *run) pigdm(x0, raw, u []float64, i int) error {
	sigma := ru.gauges[i].sigma
	v := ru.r.Method.PiGDMVar
	r2 := v * sigma * sigma / (v + sigma*sigma)
	g := make([]float64, len(x0))
	for p, pr := range ru.probs {
		m := pr.Op.Rows()
		res, sol := make([]float64, m), make([]float64, m)
		for s := range ru.k {
			row := (p*ru.k + s) * ru.d
			pr.Op.Apply(res, x0[row:row+ru.d])
			for j := range res {
				res[j] = pr.Y[j] - res[j]
			}
			SolveGram(pr.Op, sol, res, r2, pr.SigmaY*pr.SigmaY)
			pr.Op.Adjoint(g[row:row+ru.d], sol)
		}
	}
	jg := make([]float64, len(x0))
	if err := ru.vjpC(jg, u, g, raw, i); err != nil {
		return err
	}
	for j := range x0 {
		x0[j] += sigma * sigma * jg[j]
	}
	return nil
}

// dpsGrad writes ∇_c‖y − A x̂₀(c)‖ (per sample: the norm of its own residual) at grid point i.
func (ru *run) dpsGrad(dst, x0, raw, u []float64, i int) error {
	g := make([]float64, len(x0))
	for p, pr := range ru.probs {
		res := make([]float64, pr.Op.Rows())
		for s := range ru.k {
			row := (p*ru.k + s) * ru.d
			pr.Op.Apply(res, x0[row:row+ru.d])
			var norm float64
			for j := range res {
				res[j] = pr.Y[j] - res[j]
				norm += res[j] * res[j]
			}
			norm = math.Sqrt(norm)
			if norm > 0 {
				for j := range res {
					res[j] /= -norm // ∂‖y − Ax̂₀‖/∂x̂₀ = −Aᵀres/‖res‖
				}
			}
			pr.Op.Adjoint(g[row:row+ru.d], res)
		}
	}
	return ru.vjpC(dst, u, g, raw, i)
}

// down advances u from grid point i to i+1 with the method.
func (ru *run) down(u []float64, i int) error {
	m := ru.r.Method
	d, batch := ru.d, ru.batch
	g, gn := &ru.gauges[i], &ru.gauges[i+1]
	s, sn := g.sigma, gn.sigma
	c := make([]float64, batch*d)
	w := make([]float64, batch*(ru.n-1)*d+1)
	g.split(c, w, u, d, batch)
	x0 := make([]float64, batch*d)
	var raw []float64
	if m.Name == MethodPiGDM || m.Name == MethodDPS {
		raw = make([]float64, batch*d)
	}
	if err := ru.x0(x0, raw, u, i); err != nil {
		return err
	}
	var grad []float64
	switch m.Name {
	case MethodPiGDM:
		if err := ru.pigdm(x0, raw, u, i); err != nil {
			return err
		}
	case MethodDPS:
		grad = make([]float64, batch*d)
		if err := ru.dpsGrad(grad, x0, raw, u, i); err != nil {
			return err
		}
	}
	if m.Name == MethodDDNM {
		ru.ddnm(c, x0, s, sn)
	} else {
		ru.step(c, x0, i)
	}
	gn.rebuild(u, c, w, d, batch)
	delta := make([]float64, batch*d)
	switch m.Name {
	case MethodDPS:
		// VP's DPS x′ ← x′ − ζ∇_x‖y − A x̂₀‖ written in c = x/α_VP, α_VP = (1 + σ²)^(−1/2).
		f := -m.DPSScale * math.Sqrt(1+s*s) * math.Sqrt(1+sn*sn)
		for j := range delta {
			delta[j] = f * grad[j]
		}
		gn.shift(u, delta, d, batch)
	case MethodReplace, MethodRepaint:
		if ru.replace(delta, c, sn) {
			gn.shift(u, delta, d, batch)
		}
	}
	return nil
}

// step advances c (B×d) from grid point i to i+1 with the solver and x̂₀.
func (ru *run) step(c, x0 []float64, i int) {
	s, sn := ru.gauges[i].sigma, ru.gauges[i+1].sigma
	switch ru.r.Method.step() {
	case StepDDIM:
		ratio := sn / s
		for j := range c {
			c[j] = ratio*c[j] + (1-ratio)*x0[j]
		}
	case StepAnc, StepSDE2:
		keep := (sn / s) * (sn / s)
		mix := -math.Expm1(2 * math.Log(sn/s))
		std := sn * math.Sqrt(mix)
		z := make([]float64, len(c))
		ru.fill(z)
		second := ru.r.Method.step() == StepSDE2 && ru.hasHist
		var r0 float64
		if second {
			lam := func(k int) float64 { return -math.Log(ru.gauges[k].sigma) }
			r0 = (lam(i) - lam(i-1)) / (lam(i+1) - lam(i))
		}
		for j := range c {
			v := keep*c[j] + mix*x0[j]
			if second {
				v += 0.5 * mix * (x0[j] - ru.hist[j]) / r0
			}
			c[j] = v + std*z[j]
		}
		if ru.r.Method.step() == StepSDE2 {
			ru.hist = append(ru.hist[:0], x0...)
			ru.hasHist = true
		}
	}
}

// ddnm is DDNM+'s step from σ to σ′ in c (restoration.md §2(a)): with A = U diag(s)V_rᵀ, x̄ = V_rᵀx,
// ȳ_j = (Uᵀy)_j/s_j, ε̂ = (c − x̂₀)/σ from the unmodified x̂₀ and z ~ N(0, I):
//
//	range j, s_jσ′ ≥ σ_y:  x̄′_j = ȳ_j + (σ′² − σ_y²/s_j²)^{1/2} z̄_j
//	range j, s_jσ′ < σ_y:  x̄′_j = x̄₀_j + λ_j(ȳ_j − x̄₀_j) + σ′η z̄_j,   λ_j = s_jσ′(1 − η²)^{1/2}/σ_y
//	null space:            P_null(x̂₀ + σ′(η z + (1 − η²)^{1/2} ε̂))
//
// and c′ = V_r x̄′ + P_null(…): DDNM's ddnm_plus_diffusion divided by √ᾱ′.
func (ru *run) ddnm(c, x0 []float64, s, sn float64) {
	eta := ru.r.Method.Eta
	d := ru.d
	z := make([]float64, len(c))
	ru.fill(z)
	tail := math.Sqrt(1 - eta*eta)
	null := make([]float64, d)
	for p, pr := range ru.probs {
		op := pr.Op
		m := op.Rows()
		sv := op.Singular()
		ybar := make([]float64, m)
		op.UT(ybar, pr.Y)
		for j := range ybar {
			ybar[j] /= sv[j]
		}
		xbar, zbar, nbar, out := make([]float64, m), make([]float64, m), make([]float64, m), make([]float64, m)
		back := make([]float64, d)
		for k := range ru.k {
			row := (p*ru.k + k) * d
			cr, xr, zr := c[row:row+d], x0[row:row+d], z[row:row+d]
			for j := range null {
				null[j] = xr[j] + sn*(eta*zr[j]+tail*(cr[j]-xr[j])/s)
			}
			op.ToRange(nbar, null) // take out the range part: P_null v = v − V_r V_rᵀ v
			op.FromRange(back, nbar)
			for j := range null {
				null[j] -= back[j]
			}
			op.ToRange(xbar, xr)
			op.ToRange(zbar, zr)
			for j := range m {
				if sv[j]*sn >= pr.SigmaY {
					out[j] = ybar[j] + math.Sqrt(math.Max(sn*sn-pr.SigmaY*pr.SigmaY/(sv[j]*sv[j]), 0))*zbar[j]
				} else {
					lam := sv[j] * sn * tail / pr.SigmaY
					out[j] = xbar[j] + lam*(ybar[j]-xbar[j]) + sn*eta*zbar[j]
				}
			}
			op.FromRange(back, out)
			for j := range cr {
				cr[j] = null[j] + back[j]
			}
		}
	}
}

// replace writes the replacement shift δc (B×d) after a step to σ′ for masks (A⁺ = Aᵀ):
// A c ← y + (σ′² − σ_y²)^{1/2} Aξ, i.e. δc = Aᵀ(y + (σ′² − σ_y²)^{1/2}Aξ − A c), with fresh ξ every step;
// once σ′ < σ_y the measured pixels are released (no shift). It reports whether any shift was made.
func (ru *run) replace(delta, c []float64, sn float64) bool {
	xi := make([]float64, len(c))
	ru.fill(xi)
	any := false
	for p, pr := range ru.probs {
		if sn < pr.SigmaY {
			continue
		}
		any = true
		sd := math.Sqrt(sn*sn - pr.SigmaY*pr.SigmaY)
		m := pr.Op.Rows()
		ac, ax := make([]float64, m), make([]float64, m)
		for k := range ru.k {
			row := (p*ru.k + k) * ru.d
			pr.Op.Apply(ac, c[row:row+ru.d])
			pr.Op.Apply(ax, xi[row:row+ru.d])
			for j := range ac {
				ac[j] = pr.Y[j] + sd*ax[j] - ac[j]
			}
			pr.Op.Adjoint(delta[row:row+ru.d], ac)
		}
	}
	return any
}

// undo is RePaint's step back from grid point i+1 to i: c ← c + (σ_i² − σ_{i+1}²)^{1/2} ξ with w fixed,
// the exact forward transition of the VE diffusion in c.
func (ru *run) undo(u []float64, i int) {
	d, batch := ru.d, ru.batch
	g, gn := &ru.gauges[i], &ru.gauges[i+1]
	c := make([]float64, batch*d)
	w := make([]float64, batch*(ru.n-1)*d+1)
	gn.split(c, w, u, d, batch)
	xi := make([]float64, len(c))
	ru.fill(xi)
	std := math.Sqrt(g.sigma*g.sigma - gn.sigma*gn.sigma)
	for j := range c {
		c[j] += std * xi[j]
	}
	g.rebuild(u, c, w, d, batch)
}

// readout returns the method's x̂₀′ at the grid's end: x̂₀ of the exact posterior, ΠGDM's x̂₀′, or the
// clipped x̂₀, which for ddnm, replace and repaint with σ_y = 0 is projected onto Ax = y
// (x̂₀ + A⁺(y − Ax̂₀): the hard read-out).
func (ru *run) readout(u []float64) ([]float64, error) {
	last := len(ru.gauges) - 1
	m := ru.r.Method
	x0 := make([]float64, ru.batch*ru.d)
	var raw []float64
	if m.Name == MethodPiGDM {
		raw = make([]float64, len(x0))
	}
	if err := ru.x0(x0, raw, u, last); err != nil {
		return nil, err
	}
	switch m.Name {
	case MethodPiGDM:
		if err := ru.pigdm(x0, raw, u, last); err != nil {
			return nil, err
		}
	case MethodDDNM, MethodReplace, MethodRepaint:
		for p, pr := range ru.probs {
			if pr.SigmaY != 0 {
				continue
			}
			res, fix := make([]float64, pr.Op.Rows()), make([]float64, ru.d)
			for k := range ru.k {
				row := (p*ru.k + k) * ru.d
				pr.Op.Apply(res, x0[row:row+ru.d])
				for j := range res {
					res[j] = pr.Y[j] - res[j]
				}
				Pinv(pr.Op, fix, res)
				for j := range fix {
					x0[row+j] += fix[j]
				}
			}
		}
	}
	return x0, nil
}
