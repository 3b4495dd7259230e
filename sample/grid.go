package sample

import (
	"fmt"
	"math"

	"holdgo/hold"
)

// Grid kinds. A grid is a strictly decreasing list of forward times t_0 = start > t_1 > … > t_N = end;
// step i runs the reverse process from t_i to t_{i+1}.
const (
	GridUniform   = "uniform"   // t_i = start − i·(start − end)/N
	GridQuadratic = "quadratic" // t_i = end + (start − end)·((N − i)/N)², CLD-SGM's "quadratic" (docs/math.md#time-grids)
	GridGeometric = "geometric" // t_i = end·(start/end)^{(N − i)/N}: constant ratio, h_i ∝ t_i (docs/math.md#stiffness)
	// GridLogSNR is uniform in the log signal-to-noise ratio of q, λ(t) = log(m_q(t)²/Σ_qq(t)) (DPM-Solver's
	// choice, here for the data block of any SDE). Needs the SDE: NewSDEGrid.
	GridLogSNR = "logsnr"
	// GridEDM is EDM's ρ-grid (Karras et al. 2022, ρ = 7) in the noise level of the state's sufficient
	// statistic, σ_t = (m_tᵀΣ_t⁻¹m_t)^(−1/2) (NoiseLevel; gauge.go): σ_i = (σ_max^{1/ρ} +
	// i/N·(σ_min^{1/ρ} − σ_max^{1/ρ}))^ρ from σ_max = σ_start to σ_min. Needs the SDE: NewSigmaGrid.
	GridEDM = "edm"
	// GridVPMatched places the times so that σ_t follows VP's schedule on VP's quadratic grid
	// (score_sde's VP, β 0.1…20; the grid on which VP's samplers do best on the 1-D study):
	// σ_i = σ_VP(τ_i), τ_i = τ_N + (τ_0 − τ_N)·((N − i)/N)², σ_VP(τ_N) = σ_min, τ_0 = 1 or, for an SDE
	// whose σ at the start is below σ_VP(1), the VP time of that σ; σ_VP(τ) = (e^{β_min τ +
	// (β_max − β_min)τ²/2} − 1)^{1/2} is the noise level of VP's x/α. For VP it is the quadratic grid
	// from t = 1. An SDE whose σ at the start exceeds σ_VP(1) starts at the time where σ = σ_VP(1), later
	// than the grid's start (its prior stands in for the marginal there, as VP's does at t = 1).
	// Needs the SDE: NewSigmaGrid.
	GridVPMatched = "vpmatched"
	// GridLambda is uniform in λ = −log σ_t of the sufficient statistic (DPM-Solver's time-uniform-in-λ
	// choice, for the aligned gauge's c): σ_i = σ_max·(σ_min/σ_max)^{i/N}. Every step of a solver in λ
	// (a-dpm2, a-dpm3) has the same size h = log(σ_max/σ_min)/N, so none is left to straddle the noise
	// levels at which the data's narrowest modes form (docs/samplers.md, mode widths). Needs the SDE:
	// NewSigmaGrid.
	GridLambda = "lambda"
	// GridVPLambda has the mean step density in λ = −log σ of GridVPMatched and GridLambda (vpLambdaSigmas):
	// half of VP's density at the noise levels where the data's modes separate, and no step longer than
	// twice the λ-uniform one, so that the last steps do not straddle, in one or two long steps, the levels
	// at which the narrowest modes take their width (docs/samplers.md, Grids). Needs the SDE: NewSigmaGrid.
	GridVPLambda = "vplambda"
)

// DefaultSigmaMin is the noise level σ at which the σ-grids (edm, vpmatched, lambda, vplambda) end when NewSDEGrid builds
// them: EDM's σ_min.
const DefaultSigmaMin = 0.002

// EDMRho is the exponent of GridEDM.
const EDMRho = 7.0

// GridKinds lists the grid kinds in the order tables show them.
var GridKinds = []string{GridUniform, GridQuadratic, GridGeometric, GridLogSNR, GridEDM, GridVPMatched, GridLambda, GridVPLambda}

// IsSigmaGrid reports whether a grid kind is placed in the noise level σ of the sufficient statistic
// (edm, vpmatched, lambda, vplambda): such a grid ends at a σ_min, not at an end time.
func IsSigmaGrid(kind string) bool {
	return kind == GridEDM || kind == GridVPMatched || kind == GridLambda || kind == GridVPLambda
}

// logSNR returns λ(t) = log(m_q(t)²/Σ_qq(t)), the log signal-to-noise ratio of the data block.
func logSNR(sde *hold.SDE, t float64) float64 {
	k := sde.Kernel(t)
	m := k.Mean.At(0, 0)
	return math.Log(m * m / k.Sigma.At(0, 0))
}

// NewSDEGrid returns a grid of any kind: logsnr placed by bisection in log t on λ(t) of the SDE; the
// σ-grids (edm, vpmatched, lambda, vplambda) by NewSigmaGrid from start down to σ = DefaultSigmaMin, so that every SDE ends
// at the same noise level (end is not used for them); the others as NewGrid.
func NewSDEGrid(sde *hold.SDE, kind string, start, end float64, steps int) ([]float64, error) {
	if IsSigmaGrid(kind) {
		return NewSigmaGrid(sde, kind, start, DefaultSigmaMin, steps)
	}
	if kind != GridLogSNR {
		return NewGrid(kind, start, end, steps)
	}
	if _, err := NewGrid(GridUniform, start, end, steps); err != nil { // checks steps, start, end
		return nil, err
	}
	lo, hi := logSNR(sde, start), logSNR(sde, end) // λ decreases with t
	if !(hi > lo) {
		return nil, fmt.Errorf("sample: %s grid: log-SNR of q is %g at t = %g and %g at t = %g, want it decreasing", kind, hi, end, lo, start)
	}
	g := make([]float64, steps+1)
	g[0], g[steps] = start, end
	for i := 1; i < steps; i++ {
		target := lo + float64(i)/float64(steps)*(hi-lo)
		a, b := math.Log(end), math.Log(start) // λ(e^a) ≥ target ≥ λ(e^b)
		for range 200 {
			mid := 0.5 * (a + b)
			if logSNR(sde, math.Exp(mid)) > target {
				a = mid
			} else {
				b = mid
			}
			if b-a < 1e-14 {
				break
			}
		}
		g[i] = math.Exp(0.5 * (a + b))
	}
	if err := checkGrid(g); err != nil {
		return nil, fmt.Errorf("sample: %s grid with %d steps from %g to %g: %w", kind, steps, start, end, err)
	}
	return g, nil
}

// NewGrid returns the N+1 forward times of a grid of the given kind from start down to end.
func NewGrid(kind string, start, end float64, steps int) ([]float64, error) {
	if steps < 1 {
		return nil, fmt.Errorf("sample: grid needs at least one step, got %d", steps)
	}
	if !(end > 0 && start > end) || math.IsInf(start, 0) {
		return nil, fmt.Errorf("sample: grid needs start > end > 0, got start %g, end %g", start, end)
	}
	g := make([]float64, steps+1)
	n := float64(steps)
	for i := range g {
		frac := float64(steps-i) / n // 1 at the start, 0 at the end
		switch kind {
		case GridUniform:
			g[i] = end + (start-end)*frac
		case GridQuadratic:
			g[i] = end + (start-end)*frac*frac
		case GridGeometric:
			g[i] = end * math.Exp(frac*math.Log(start/end))
		case GridLogSNR, GridEDM, GridVPMatched, GridLambda:
			return nil, fmt.Errorf("sample: the %s grid needs the SDE (NewSDEGrid)", kind)
		default:
			return nil, fmt.Errorf("sample: unknown grid kind %q (want uniform, quadratic, geometric, logsnr, edm, vpmatched, lambda or vplambda)", kind)
		}
	}
	g[0], g[steps] = start, end // exact end points whatever the rounding
	for i := 1; i <= steps; i++ {
		if !(g[i] < g[i-1]) {
			return nil, fmt.Errorf("sample: %s grid with %d steps from %g to %g is not strictly decreasing at step %d", kind, steps, start, end, i)
		}
	}
	return g, nil
}

// checkGrid reports whether grid is a strictly decreasing list of at least two positive times.
func checkGrid(grid []float64) error {
	if len(grid) < 2 {
		return fmt.Errorf("sample: grid needs at least two times, got %d", len(grid))
	}
	for i, t := range grid {
		if !(t > 0) || math.IsInf(t, 0) {
			return fmt.Errorf("sample: grid time %d is %g, want finite and > 0", i, t)
		}
		if i > 0 && !(t < grid[i-1]) {
			return fmt.Errorf("sample: grid is not strictly decreasing at %d (%g after %g)", i, t, grid[i-1])
		}
	}
	return nil
}

// NewSigmaGrid returns the N+1 forward times of a σ-grid (GridEDM, GridVPMatched or GridLambda) from start down to
// the time at which the sufficient statistic's noise level σ_t (NoiseLevel) is sigmaMin.
func NewSigmaGrid(sde *hold.SDE, kind string, start, sigmaMin float64, steps int) ([]float64, error) {
	if !IsSigmaGrid(kind) {
		return nil, fmt.Errorf("sample: %q is not a σ-grid (want edm, vpmatched, lambda or vplambda)", kind)
	}
	if steps < 1 {
		return nil, fmt.Errorf("sample: grid needs at least one step, got %d", steps)
	}
	if !(start > sde.MinTime() && start <= sde.Horizon()) {
		return nil, fmt.Errorf("sample: %s grid start %g outside (t_min, T] = (%g, %g]", kind, start, sde.MinTime(), sde.Horizon())
	}
	smax, err := NoiseLevel(sde, start)
	if err != nil {
		return nil, err
	}
	if !(sigmaMin > 0 && sigmaMin < smax) {
		return nil, fmt.Errorf("sample: %s grid: σ_min %g must be positive and below σ at the start (%g at t = %g)", kind, sigmaMin, smax, start)
	}
	sigmas := make([]float64, steps+1)
	switch kind {
	case GridEDM:
		a, b := math.Pow(smax, 1/EDMRho), math.Pow(sigmaMin, 1/EDMRho)
		for i := range sigmas {
			sigmas[i] = math.Pow(a+float64(i)/float64(steps)*(b-a), EDMRho)
		}
	case GridLambda:
		for i := range sigmas {
			sigmas[i] = smax * math.Exp(float64(i)/float64(steps)*math.Log(sigmaMin/smax))
		}
	case GridVPMatched:
		t0, t1 := min(1, vpTimeAt(smax)), vpTimeAt(sigmaMin)
		for i := range sigmas {
			frac := float64(steps-i) / float64(steps)
			sigmas[i] = vpSigma(t1 + (t0-t1)*frac*frac)
		}
	case GridVPLambda:
		vpLambdaSigmas(sigmas, min(1, vpTimeAt(smax)), vpTimeAt(sigmaMin))
	}
	g := make([]float64, steps+1)
	g[0] = start
	first := 1
	if sigmas[0] < smax*(1-1e-12) { // a later start (vpmatched above VP's range)
		first = 0
	}
	for i := first; i <= steps; i++ {
		if g[i], err = TimeAtNoiseLevel(sde, sigmas[i], sde.MinTime(), start); err != nil {
			return nil, fmt.Errorf("sample: %s grid step %d: %w", kind, i, err)
		}
	}
	if err := checkGrid(g); err != nil {
		return nil, fmt.Errorf("sample: %s grid with %d steps from %g to σ = %g: %w", kind, steps, start, sigmaMin, err)
	}
	return g, nil
}

// vpLambdaSigmas fills sigmas with the grid whose step density in λ = −log σ is the mean of GridVPMatched's
// and GridLambda's: λ_i solves ½u_VP(λ) + ½(λ − λ_0)/(λ_N − λ_0) = i/N, where u_VP(λ) ∈ [0, 1] is the
// fraction of VP's quadratic grid (σ_VP(τ_N + (τ_0 − τ_N)(1 − u)²)) that lies before λ.
func vpLambdaSigmas(sigmas []float64, t0, t1 float64) {
	n := len(sigmas) - 1
	lam := func(u float64) float64 { return -math.Log(vpSigma(t1 + (t0-t1)*(1-u)*(1-u))) }
	l0, l1 := lam(0), lam(1)
	sigmas[0], sigmas[n] = math.Exp(-l0), math.Exp(-l1)
	for i := 1; i < n; i++ {
		target := float64(i) / float64(n)
		a, b := 0.0, 1.0 // in u; F(u) = ½u + ½(λ(u) − λ_0)/(λ_N − λ_0) increases with u
		for range 200 {
			mid := 0.5 * (a + b)
			if 0.5*mid+0.5*(lam(mid)-l0)/(l1-l0) < target {
				a = mid
			} else {
				b = mid
			}
			if b-a < 1e-15 {
				break
			}
		}
		sigmas[i] = math.Exp(-lam(0.5 * (a + b)))
	}
}

// vpSigma is σ_VP(τ) = (e^{β_min τ + (β_max − β_min)τ²/2} − 1)^{1/2}, the noise level of x/α_τ for
// score_sde's VP schedule (GridVPMatched's shape; τ may exceed 1).
func vpSigma(tau float64) float64 {
	c := hold.DefaultConfig(hold.KindVP)
	return math.Sqrt(math.Expm1(c.BetaMin*tau + 0.5*(c.BetaMax-c.BetaMin)*tau*tau))
}

// vpTimeAt inverts vpSigma.
func vpTimeAt(sigma float64) float64 {
	c := hold.DefaultConfig(hold.KindVP)
	b := math.Log1p(sigma * sigma)
	d := c.BetaMax - c.BetaMin
	return 2 * b / (c.BetaMin + math.Sqrt(c.BetaMin*c.BetaMin+2*d*b)) // (−β_min + √(β_min² + 2Δb))/Δ without cancellation
}
