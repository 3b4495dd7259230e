package sample

import (
	"fmt"
	"math"
)

// Grid kinds. A grid is a strictly decreasing list of forward times t_0 = start > t_1 > … > t_N = end;
// step i runs the reverse process from t_i to t_{i+1}.
const (
	GridUniform   = "uniform"   // t_i = start − i·(start − end)/N
	GridQuadratic = "quadratic" // t_i = end + (start − end)·((N − i)/N)², CLD-SGM's "quadratic" (reference-spec §3.5)
	GridGeometric = "geometric" // t_i = end·(start/end)^{(N − i)/N}: constant ratio, h_i ∝ t_i (hold-math §7)
)

// GridKinds lists the grid kinds in the order tables show them.
var GridKinds = []string{GridUniform, GridQuadratic, GridGeometric}

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
		default:
			return nil, fmt.Errorf("sample: unknown grid kind %q (want uniform, quadratic or geometric)", kind)
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
