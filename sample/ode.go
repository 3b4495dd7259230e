package sample

import (
	"errors"
	"fmt"
	"math"
)

// ODEFunc writes dy/dt at (t, y) into dy.
type ODEFunc func(t float64, y, dy []float64) error

// ODEOptions controls the adaptive Dormand–Prince solver.
type ODEOptions struct {
	RTol, ATol float64 // 0 means DefaultTol
	MaxSteps   int     // attempted steps; 0 means 100000
}

// DefaultTol is CLD-SGM's and the HOLD paper's rtol = atol for the probability-flow ODE.
const DefaultTol = 1e-5

// ODEStats reports the work of a solve.
type ODEStats struct {
	Evals    int // right-hand-side evaluations
	Accepted int
	Rejected int
}

// Dormand–Prince 5(4) tableau (scipy.integrate.RK45).
var (
	dpC = [6]float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1}
	dpA = [6][5]float64{
		{},
		{1.0 / 5},
		{3.0 / 40, 9.0 / 40},
		{44.0 / 45, -56.0 / 15, 32.0 / 9},
		{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
		{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
	}
	dpB = [6]float64{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84}
	// dpE are the error weights of the 7 stages (the 7th is f(t + h, y_new), FSAL).
	dpE = [7]float64{-71.0 / 57600, 0, 71.0 / 16695, -71.0 / 1920, 17253.0 / 339200, -22.0 / 525, 1.0 / 40}
)

const (
	odeSafety    = 0.9
	odeMinFactor = 0.2
	odeMaxFactor = 10
	odeErrExp    = -1.0 / 5 // −1/(q + 1) with q = 4, the order of the embedded error estimate
)

// SolveODE integrates y' = f(t, y) in place from t0 to t1 (either direction) with the adaptive
// Dormand–Prince 5(4) pair and scipy's RK45 step control: local extrapolation (the 5th-order solution is
// kept), error norm = RMS over all of y of err/(atol + rtol·max(|y|, |y_new|)), accept if ≤ 1, new step
// h·min(10, 0.9·norm^(−1/5)) (at most h after a rejection), on rejection h·max(0.2, 0.9·norm^(−1/5)),
// and Hairer's initial step (scipy's select_initial_step, capped at |t1 − t0|). For each time in stops
// (strictly between t0 and t1, ordered from t0 towards t1) the solver lands on it exactly and calls
// onStop(t, y); the step size carries over. Cost: 2 + 6 evaluations per attempted step.
func SolveODE(f ODEFunc, t0, t1 float64, y []float64, opt ODEOptions, stops []float64, onStop func(t float64, y []float64)) (ODEStats, error) {
	s := &odeSolver{f: f, rtol: opt.RTol, atol: opt.ATol, maxSteps: opt.MaxSteps}
	if s.rtol == 0 {
		s.rtol = DefaultTol
	}
	if s.atol == 0 {
		s.atol = DefaultTol
	}
	if s.maxSteps == 0 {
		s.maxSteps = 100000
	}
	if !(s.rtol > 0 && s.atol > 0) || math.IsInf(t0, 0) || math.IsInf(t1, 0) || math.IsNaN(t0) || math.IsNaN(t1) {
		return s.stats, fmt.Errorf("sample: ODE: need rtol, atol > 0 and finite times (rtol %g, atol %g, t %g → %g)", s.rtol, s.atol, t0, t1)
	}
	if t0 == t1 || len(y) == 0 {
		return s.stats, nil
	}
	s.dir = 1
	if t1 < t0 {
		s.dir = -1
	}
	for i, ts := range stops {
		prev := t0
		if i > 0 {
			prev = stops[i-1]
		}
		if !(s.dir*(ts-prev) > 0 && s.dir*(t1-ts) > 0) {
			return s.stats, fmt.Errorf("sample: ODE: stop %g not strictly between %g and %g in order", ts, prev, t1)
		}
	}
	if err := s.init(t0, y, math.Abs(t1-t0)); err != nil {
		return s.stats, err
	}
	for _, ts := range stops {
		if err := s.advance(ts); err != nil {
			return s.stats, err
		}
		if onStop != nil {
			onStop(ts, s.y)
		}
	}
	if err := s.advance(t1); err != nil {
		return s.stats, err
	}
	copy(y, s.y)
	return s.stats, nil
}

type odeSolver struct {
	f          ODEFunc
	rtol, atol float64
	maxSteps   int
	dir        float64
	t, hAbs    float64
	y, fy      []float64
	k          [7][]float64
	yNew, tmp  []float64
	stats      ODEStats
}

func (s *odeSolver) eval(t float64, y, dy []float64) error {
	s.stats.Evals++
	if err := s.f(t, y, dy); err != nil {
		return fmt.Errorf("sample: ODE right-hand side at t = %g: %w", t, err)
	}
	return nil
}

// rms returns the root mean square of v[i]/scale[i].
func rms(v, scale []float64) float64 {
	var sum float64
	for i, x := range v {
		r := x / scale[i]
		sum += r * r
	}
	return math.Sqrt(sum / float64(len(v)))
}

// init evaluates f at the start and selects the first step (scipy select_initial_step).
func (s *odeSolver) init(t0 float64, y0 []float64, span float64) error {
	n := len(y0)
	s.t = t0
	s.y = append([]float64(nil), y0...)
	s.fy = make([]float64, n)
	for i := range s.k {
		s.k[i] = make([]float64, n)
	}
	s.yNew, s.tmp = make([]float64, n), make([]float64, n)
	if err := s.eval(t0, s.y, s.fy); err != nil {
		return err
	}
	scale := make([]float64, n)
	for i, v := range s.y {
		scale[i] = s.atol + math.Abs(v)*s.rtol
	}
	d0, d1 := rms(s.y, scale), rms(s.fy, scale)
	h0 := 1e-6
	if d0 >= 1e-5 && d1 >= 1e-5 {
		h0 = 0.01 * d0 / d1
	}
	h0 = math.Min(h0, span)
	for i := range s.tmp {
		s.yNew[i] = s.y[i] + s.dir*h0*s.fy[i]
	}
	if err := s.eval(t0+s.dir*h0, s.yNew, s.tmp); err != nil {
		return err
	}
	for i := range s.tmp {
		s.tmp[i] -= s.fy[i]
	}
	d2 := rms(s.tmp, scale) / h0
	var h1 float64
	if d1 <= 1e-15 && d2 <= 1e-15 {
		h1 = math.Max(1e-6, h0*1e-3)
	} else {
		h1 = math.Pow(0.01/math.Max(d1, d2), 0.2)
	}
	s.hAbs = math.Min(math.Min(100*h0, h1), span)
	return nil
}

// advance steps until t = tb exactly.
func (s *odeSolver) advance(tb float64) error {
	n := len(s.y)
	scale := make([]float64, n)
	for s.t != tb {
		minStep := 10 * math.Abs(math.Nextafter(s.t, s.dir*math.Inf(1))-s.t)
		if s.hAbs < minStep {
			s.hAbs = minStep
		}
		rejected := false
		for {
			if s.stats.Accepted+s.stats.Rejected >= s.maxSteps {
				return fmt.Errorf("sample: ODE: %d steps without reaching t = %g (at t = %g)", s.maxSteps, tb, s.t)
			}
			if s.hAbs < minStep {
				return fmt.Errorf("sample: ODE: step size %g below the minimum at t = %g", s.hAbs, s.t)
			}
			h := s.dir * s.hAbs
			tNew := s.t + h
			if s.dir*(tNew-tb) >= 0 {
				tNew = tb
			}
			h = tNew - s.t
			hAbs := math.Abs(h)
			if err := s.rkStep(h); err != nil {
				return err
			}
			// The 7th stage is f(t_new, y_new) (FSAL).
			if err := s.eval(tNew, s.yNew, s.k[6]); err != nil {
				return err
			}
			for i := range scale {
				scale[i] = s.atol + s.rtol*math.Max(math.Abs(s.y[i]), math.Abs(s.yNew[i]))
			}
			for i := range s.tmp {
				var e float64
				for j, w := range dpE {
					e += w * s.k[j][i]
				}
				s.tmp[i] = h * e
			}
			norm := rms(s.tmp, scale)
			if math.IsNaN(norm) {
				return errors.New("sample: ODE: NaN in the error estimate")
			}
			if norm < 1 {
				factor := float64(odeMaxFactor)
				if norm > 0 {
					factor = math.Min(odeMaxFactor, odeSafety*math.Pow(norm, odeErrExp))
				}
				if rejected {
					factor = math.Min(1, factor)
				}
				s.hAbs = hAbs * factor
				s.t = tNew
				s.y, s.yNew = s.yNew, s.y
				s.fy, s.k[6] = s.k[6], s.fy
				s.stats.Accepted++
				break
			}
			s.hAbs = hAbs * math.Max(odeMinFactor, odeSafety*math.Pow(norm, odeErrExp))
			rejected = true
			s.stats.Rejected++
		}
	}
	return nil
}

// rkStep computes the stages k[0..5] (k[0] = f(t, y)) and the 5th-order solution yNew.
func (s *odeSolver) rkStep(h float64) error {
	copy(s.k[0], s.fy)
	for st := 1; st < 6; st++ {
		for i := range s.tmp {
			var dy float64
			for j := 0; j < st; j++ {
				dy += dpA[st][j] * s.k[j][i]
			}
			s.tmp[i] = s.y[i] + h*dy
		}
		if err := s.eval(s.t+dpC[st]*h, s.tmp, s.k[st]); err != nil {
			return err
		}
	}
	for i := range s.yNew {
		var dy float64
		for j, w := range dpB {
			dy += w * s.k[j][i]
		}
		s.yNew[i] = s.y[i] + h*dy
	}
	return nil
}

// DormandPrince solves the probability-flow ODE from the grid's first to its last time with SolveODE;
// the whole chunk is one state vector, so the step size is shared across the chunk (as CLD-SGM's
// scipy_solver). NFE = right-hand-side evaluations.
type DormandPrince struct {
	RTol, ATol float64 // 0 means DefaultTol
}

// Name returns "ode".
func (DormandPrince) Name() string { return "ode" }

func (m DormandPrince) integrate(r *run, x []float64, batch int) error {
	start, end := r.grid[0], r.grid[len(r.grid)-1]
	f := func(t float64, y, dy []float64) error {
		// dy/dt in forward time is −(reverse-time drift)
		if err := pfDrift(r, dy, y, batch, t); err != nil {
			return err
		}
		for i := range dy {
			dy[i] = -dy[i]
		}
		return nil
	}
	var stops []float64
	if r.rec != nil {
		r.rec.exact(start, end)
		r.rec.offer(start, x)
		stops = r.rec.stops(start, end)
	}
	_, err := SolveODE(f, start, end, x, ODEOptions{RTol: m.RTol, ATol: m.ATol}, stops, func(t float64, y []float64) { r.rec.offer(t, y) })
	if err == nil {
		r.rec.offer(end, x)
	}
	return err
}
