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

// ScoreVJP writes the clipped score S′ into score (when not nil) and uᵀ·∂S′/∂x into vjp, so that the
// likelihood (NLL, both gauges) can integrate the flow of the clipped denoiser. Per pixel i of sample b,
//
//	inside (|x̂₀| < Bound):  S′ = S,                 ∂S′/∂x = ∂S/∂x;
//	outside:                S′ = ±rᵀm·Bound − rᵀu,  ∂S′/∂x_(k,i) = −r_k (a linear function of the state),
//
// so uᵀ·∂S′/∂x is the inner VJP with the cotangent zeroed outside the bound, minus u_i·r_k on block k of
// each clipped pixel. The kink at |x̂₀| = Bound has measure zero. One inner pass when nothing is clipped
// (near the data, where the likelihood integral weighs most), two otherwise (the first decides which
// pixels are inside). Inner must be a DivScorer.
func (c *ClippedScorer) ScoreVJP(score, vjp, x, u, t []float64) error {
	inner, ok := c.Inner.(DivScorer)
	if !ok {
		return fmt.Errorf("sample: clipped score: the inner score (%T) has no vector–Jacobian product", c.Inner)
	}
	batch, n := len(t), c.SDE.Blocks()
	if batch == 0 {
		return nil
	}
	if len(u)%batch != 0 || len(x) != len(u)*n || len(vjp) != len(x) || (score != nil && len(score) != len(u)) {
		return fmt.Errorf("sample: clipped score VJP: %d cotangents, %d state values, %d VJP values, %d times", len(u), len(x), len(vjp), batch)
	}
	d := len(u) / batch
	s := make([]float64, len(u))
	if err := inner.ScoreVJP(s, vjp, x, u, t); err != nil {
		return err
	}
	var (
		r       vecN
		rm      float64
		clipped bool
	)
	masked := make([]float64, len(u))
	outside := make([]bool, len(u))
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
			j := b*d + i
			x0 := (s[j] + ru) / rm
			if cl := math.Max(-c.Bound, math.Min(c.Bound, x0)); cl != x0 {
				clipped, outside[j] = true, true
				s[j] = rm*cl - ru
				continue
			}
			masked[j] = u[j]
		}
	}
	if clipped {
		if err := inner.ScoreVJP(nil, vjp, x, masked, t); err != nil {
			return err
		}
		for b := 0; b < batch; b++ {
			if b == 0 || t[b] != t[b-1] {
				r, _ = lastRow(c.SDE, t[b])
			}
			for i := 0; i < d; i++ {
				j := b*d + i
				if outside[j] {
					for k := 0; k < n; k++ {
						vjp[b*n*d+k*d+i] -= u[j] * r[k]
					}
				}
			}
		}
	}
	if score != nil {
		copy(score, s)
	}
	return nil
}
