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
	GridQuadratic = "quadratic" // t_i = end + (start − end)·((N − i)/N)², CLD-SGM's "quadratic" (reference-spec §3.5)
	GridGeometric = "geometric" // t_i = end·(start/end)^{(N − i)/N}: constant ratio, h_i ∝ t_i (hold-math §7)
	// GridLogSNR is uniform in the log signal-to-noise ratio of q, λ(t) = log(m_q(t)²/Σ_qq(t)) (DPM-Solver's
	// choice, here for the data block of any SDE). Needs the SDE: NewSDEGrid.
	GridLogSNR = "logsnr"
	// GridEDM is EDM's ρ-grid (Karras et al. 2022, ρ = 7) in the noise level of q, σ(t) = e^{−λ(t)/2}:
	// σ_i = (σ_max^{1/ρ} + i/N·(σ_min^{1/ρ} − σ_max^{1/ρ}))^ρ. Needs the SDE: NewSDEGrid.
	GridEDM = "edm"
)

// EDMRho is the exponent of GridEDM.
const EDMRho = 7.0

// GridKinds lists the grid kinds in the order tables show them.
var GridKinds = []string{GridUniform, GridQuadratic, GridGeometric, GridLogSNR, GridEDM}

// logSNR returns λ(t) = log(m_q(t)²/Σ_qq(t)), the log signal-to-noise ratio of the data block.
func logSNR(sde *hold.SDE, t float64) float64 {
	k := sde.Kernel(t)
	m := k.Mean.At(0, 0)
	return math.Log(m * m / k.Sigma.At(0, 0))
}

// NewSDEGrid returns a grid of any kind, the SNR-based ones (logsnr, edm) placed by bisection in log t
// on λ(t) of the SDE; the others as NewGrid.
func NewSDEGrid(sde *hold.SDE, kind string, start, end float64, steps int) ([]float64, error) {
	if kind != GridLogSNR && kind != GridEDM {
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
		frac := float64(i) / float64(steps)
		target := lo + frac*(hi-lo)
		if kind == GridEDM {
			smax, smin := math.Exp(-lo/(2*EDMRho)), math.Exp(-hi/(2*EDMRho))
			sigma := math.Pow(smax+frac*(smin-smax), EDMRho)
			target = -2 * math.Log(sigma)
		}
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
		case GridLogSNR, GridEDM:
			return nil, fmt.Errorf("sample: the %s grid needs the SDE (NewSDEGrid)", kind)
		default:
			return nil, fmt.Errorf("sample: unknown grid kind %q (want uniform, quadratic, geometric, logsnr or edm)", kind)
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
