package sample

import (
	"fmt"

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
}

// Build returns a sampler for sde and score on data of dimension d.
func (s Spec) Build(sde *hold.SDE, score hold.Scorer, d int) (*Sampler, error) {
	m, perStep, err := NewMethod(s.Method, Options{Tol: s.Tol, Eta: s.Eta, EtaSet: s.EtaSet, Clip: s.Clip})
	if err != nil {
		return nil, err
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
