package sample

import (
	"fmt"
	"math"

	"holdgo/hold"
)

// ClippedScorer thresholds the data prediction inside a score: the last-block score it returns is the
// one of the clipped denoiser,
//
//	S′ = −(Σ_t⁻¹(u − m_t·clip(x̂₀)))_n = (rᵀm_t)·clip(x̂₀) − rᵀu,   r = Σ_t⁻¹e_n,
//
// with x̂₀ = (S + rᵀu)/(rᵀm_t) from the inner score S (PredictX0). Where x̂₀ lies within [−Bound, Bound]
// S′ = S to rounding; elsewhere the score points at the data range instead of wherever a network's
// poor estimate at large noise levels sends it. This is static x̂₀ thresholding (DDIM, DPM-Solver++ on
// images) for the samplers that consume a score (lt, em, pc, the ODE solvers); the x̂₀ and aligned
// samplers clip x̂₀ themselves (Options.Clip).
type ClippedScorer struct {
	SDE   *hold.SDE
	Inner hold.Scorer
	Bound float64
}

// NewClippedScorer checks the bound and wraps score.
func NewClippedScorer(sde *hold.SDE, score hold.Scorer, bound float64) (*ClippedScorer, error) {
	if !(bound > 0) || math.IsInf(bound, 0) {
		return nil, fmt.Errorf("sample: x̂₀ clip bound %g, want positive and finite", bound)
	}
	return &ClippedScorer{SDE: sde, Inner: score, Bound: bound}, nil
}

// Score writes the last-block score of the clipped denoiser.
func (c *ClippedScorer) Score(dst, x, t []float64) error {
	if len(t) == 0 {
		return nil
	}
	if len(dst)%len(t) != 0 || len(x) != len(dst)*c.SDE.Blocks() {
		return fmt.Errorf("sample: clipped score: %d destinations, %d state values, %d times", len(dst), len(x), len(t))
	}
	if err := PredictX0(c.SDE, c.Inner, dst, x, t); err != nil {
		return err
	}
	n, batch := c.SDE.Blocks(), len(t)
	d := len(dst) / batch
	var (
		r  vecN
		rm float64
	)
	for b := 0; b < batch; b++ {
		if b == 0 || t[b] != t[b-1] {
			r, rm = lastRow(c.SDE, t[b])
		}
		row := x[b*n*d : (b+1)*n*d]
		for i := 0; i < d; i++ {
			var ru float64
			for k := 0; k < n; k++ {
				ru += r[k] * row[k*d+i]
			}
			x0 := math.Max(-c.Bound, math.Min(c.Bound, dst[b*d+i]))
			dst[b*d+i] = rm*x0 - ru
		}
	}
	return nil
}

// Fork gives each sampling worker its own copy when the inner score has one.
func (c *ClippedScorer) Fork() hold.Scorer {
	if f, ok := c.Inner.(Forker); ok {
		return &ClippedScorer{SDE: c.SDE, Inner: f.Fork(), Bound: c.Bound}
	}
	return c
}
