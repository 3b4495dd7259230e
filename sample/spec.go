package sample

import (
	"fmt"
	"math"

	"holdgo/hold"
)

// Spec is how to sample: the method (a Registry name), its step budget and grid. holdctl's sampler
// flags fill it; its errors name those flags (--nfe, --steps, --eps, --clip).
type Spec struct {
	Method string  // a name of Registry
	NFE    int     // score evaluations (fixed-step methods); 0: use Steps
	Steps  int     // steps (fixed-step methods)
	Grid   string  // uniform, quadratic, geometric, logsnr, edm, vpmatched, lambda, vplambda
	End    float64 // end time ε of the reverse process (the t-grids)
	// SigmaMin is the noise level σ at which the σ-grids (edm, vpmatched, lambda, vplambda) end (0: DefaultSigmaMin).
	SigmaMin float64
	Clip     float64 // > 0: x̂₀ of the x̂₀ and aligned samplers thresholded to [−Clip, Clip]
	Denoise  bool    // final step at ε: CLD-SGM's denoising, or the x̂₀ read-out (one more evaluation)
	Tol      float64 // adaptive ODE rtol = atol
	Eta      float64 // xanc: 1 the posterior step, 0 xddim
	EtaSet   bool
	// NFESet marks an NFE the user gave (holdctl's --nfe): an adaptive sampler, whose evaluations follow
	// Tol, refuses it rather than ignore it. Code that passes a default NFE to any method leaves it false.
	NFESet bool
}

// validate checks the values every sampler family reads, whatever the method: a NaN or negative
// --clip, --eps, --eta, --sigma-min or --tol is refused even where the method would not use it.
func (s Spec) validate() error {
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !(s.Clip >= 0) || !finite(s.Clip):
		return fmt.Errorf("--clip %g: want 0 (off) or a positive finite bound (1 for images)", s.Clip)
	case !finite(s.End) || s.End < 0:
		return fmt.Errorf("--eps %g: want a finite end time > 0", s.End)
	case !finite(s.SigmaMin) || s.SigmaMin < 0:
		return fmt.Errorf("--sigma-min %g: want a finite noise level > 0 (0: the default %g)", s.SigmaMin, DefaultSigmaMin)
	case !(s.Eta >= 0 && s.Eta <= 1):
		return fmt.Errorf("--eta %g: want a value in [0, 1] (1: the exact posterior step, 0: xddim)", s.Eta)
	case !(s.Tol >= 0) || !finite(s.Tol):
		return fmt.Errorf("--tol %g: want a tolerance in (0, 1)", s.Tol)
	case s.NFE < 0:
		return fmt.Errorf("--nfe %d: want ≥ 0 (0: use --steps)", s.NFE)
	}
	return nil
}

// Build returns a sampler for sde and score on data of dimension d.
func (s Spec) Build(sde *hold.SDE, score hold.Scorer, d int) (*Sampler, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	m, perStep, err := NewMethod(s.Method, Options{Tol: s.Tol, Eta: s.Eta, EtaSet: s.EtaSet, Clip: s.Clip})
	if err != nil {
		return nil, err
	}
	if perStep == 0 && s.NFESet && s.NFE > 0 {
		return nil, fmt.Errorf("--nfe %d: %s is adaptive, its evaluations follow --tol (%g); drop --nfe or pick a fixed-step sampler", s.NFE, s.Method, s.Tol)
	}
	steps := s.Steps
	if s.NFE > 0 || perStep == 0 {
		if steps, err = StepsFor(s.Method, s.NFE, s.Denoise); err != nil {
			return nil, fmt.Errorf("--nfe: %w", err)
		}
	}
	if steps < 1 {
		return nil, fmt.Errorf("--steps %d: want at least one step", steps)
	}
	if !(s.End > 0 && s.End < sde.Horizon()) {
		return nil, fmt.Errorf("--eps %g must be in (0, T = %g)", s.End, sde.Horizon())
	}
	var grid []float64
	if IsSigmaGrid(s.Grid) {
		sigmaMin := s.SigmaMin
		if sigmaMin == 0 {
			sigmaMin = DefaultSigmaMin
		}
		grid, err = NewSigmaGrid(sde, s.Grid, sde.Horizon(), sigmaMin, steps)
	} else {
		grid, err = NewSDEGrid(sde, s.Grid, sde.Horizon(), s.End, steps)
	}
	if err != nil {
		return nil, err
	}
	if s.Clip > 0 && !HasReadout(s.Method) { // the x̂₀ and aligned samplers clip x̂₀ themselves
		if score, err = NewClippedScorer(sde, score, s.Clip); err != nil {
			return nil, fmt.Errorf("--clip: %w", err)
		}
	}
	return &Sampler{SDE: sde, Score: score, Method: m, Grid: grid, Dim: d, Denoise: s.Denoise}, nil
}

// FirstBlock extracts the data block q (n×d) from states (n×blocks·d) as float32.
func FirstBlock(x []float64, n, blocks, d int) []float32 {
	out := make([]float32, n*d)
	for i := range n {
		for j := range d {
			out[i*d+j] = float32(x[i*blocks*d+j])
		}
	}
	return out
}

// ConvergedRows returns the rows of x (n × d) that Diverged accepts and how many it dropped.
func ConvergedRows(x []float32, d int) ([]float32, int) {
	out := make([]float32, 0, len(x))
	dropped := 0
	for i := 0; i+d <= len(x); i += d {
		if Diverged(x[i : i+d]) {
			dropped++
			continue
		}
		out = append(out, x[i:i+d]...)
	}
	return out, dropped
}
