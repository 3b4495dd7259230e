package sample

import "holdgo/hold"

// DivScorer is a score that also gives vector–Jacobian products of the last-block score, which the
// likelihood's divergence needs. A network provides it through autograd (one backward pass);
// hold.MixtureOracle analytically (the one oracle of the project).
type DivScorer interface {
	hold.Scorer
	// ScoreVJP writes the last-block score S (B×d) into score and uᵀ·∂S/∂x (B×n·d) into vjp, for
	// cotangents u (B×d), states x (B×n·d) and per-sample times t (B). score may be nil.
	ScoreVJP(score, vjp, x, u, t []float64) error
}
