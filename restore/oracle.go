package restore

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"holdgo/hold"
)

// GaussianOracle is the exact score of Gaussian data q0 ~ N(μ, C) (d dimensions, C positive
// semi-definite) under an SDE of the family. By the aligned gauge x̂₀ depends on the state u only
// through c = toCᵀu, c | q0 ~ N(q0, σ_t²I), so
//
//	x̂₀ = μ + K(c − μ),  K = C(C + σ_t²I)⁻¹,   S = (rᵀm)x̂₀ − rᵀu,
//	(gᵀ∂S/∂u)_k = (rᵀm)·toC_k·Kᵀg − r_k g       (K is symmetric),
//
// restoration.md §2(c). The exact conditional denoiser of a linear-Gaussian measurement is the
// oracle of the posterior N(μ_y, Σ_y) (GaussianPosterior). Not safe for concurrent use (it caches the
// quantities of the last time it saw).
type GaussianOracle struct {
	SDE  *hold.SDE
	Mean []float64
	Cov  *mat.SymDense

	gsde    *hold.SDE
	lastT   float64
	g       gauge
	k       []float64 // K at lastT, d×d row-major
	scratch []float64
	cbuf    []float64
	wbuf    []float64
}

// NewGaussianOracle checks μ (d) and C (d×d, row-major, symmetric, finite, non-negative diagonal)
// and binds them to the SDE.
func NewGaussianOracle(sde *hold.SDE, mean, cov []float64) (*GaussianOracle, error) {
	d := len(mean)
	if d == 0 || len(cov) != d*d {
		return nil, fmt.Errorf("restore: Gaussian oracle: %d mean values and %d covariance values", d, len(cov))
	}
	for i := range d {
		for j := range d {
			v := cov[i*d+j]
			if math.IsNaN(v) || math.IsInf(v, 0) || v != cov[j*d+i] || (i == j && v < 0) {
				return nil, fmt.Errorf("restore: Gaussian oracle: the covariance is not symmetric, finite, with a non-negative diagonal at (%d, %d)", i, j)
			}
		}
	}
	gs, err := gaugeSDE(sde)
	if err != nil {
		return nil, err
	}
	return &GaussianOracle{SDE: sde, Mean: append([]float64(nil), mean...), Cov: mat.NewSymDense(d, append([]float64(nil), cov...)),
		gsde: gs, lastT: math.NaN(), scratch: make([]float64, d)}, nil
}

// Dim returns d.
func (o *GaussianOracle) Dim() int { return len(o.Mean) }

// at sets the gauge and K of time t.
func (o *GaussianOracle) at(t float64) error {
	if t == o.lastT {
		return nil
	}
	g, err := newGauge(o.gsde, t)
	if err != nil {
		return err
	}
	k, err := o.Gain(g.sigma)
	if err != nil {
		return fmt.Errorf("restore: Gaussian oracle at t = %g: %w", t, err)
	}
	o.g, o.k, o.lastT = g, k.RawMatrix().Data, t
	return nil
}

// Gain returns K = C(C + σ²I)⁻¹ (d×d), the gain of the VE denoiser at noise level σ > 0.
func (o *GaussianOracle) Gain(sigma float64) (*mat.Dense, error) {
	d := o.Dim()
	a := mat.NewSymDense(d, nil)
	a.CopySym(o.Cov)
	for i := range d {
		a.SetSym(i, i, a.At(i, i)+sigma*sigma)
	}
	var ch mat.Cholesky
	if !ch.Factorize(a) {
		return nil, fmt.Errorf("C + σ²I is not positive definite at σ = %g", sigma)
	}
	var k mat.Dense // K = C(C + σ²I)⁻¹ = ((C + σ²I)⁻¹C)ᵀ
	if err := ch.SolveTo(&k, o.Cov); err != nil {
		return nil, err
	}
	return mat.DenseCopyOf(k.T()), nil
}

// denoise writes x̂₀ = μ + K(c − μ) of one statistic c (d values) with the gain K (d×d row-major).
func (o *GaussianOracle) denoise(dst, c []float64, k []float64) {
	d := o.Dim()
	for i := range d {
		o.scratch[i] = c[i] - o.Mean[i]
	}
	for i := range d {
		s := o.Mean[i]
		for j, v := range k[i*d : (i+1)*d] {
			s += v * o.scratch[j]
		}
		dst[i] = s
	}
}

// check validates the shapes of a batch (times all in one call may differ).
func (o *GaussianOracle) check(dst, x, t []float64) (int, error) {
	d, n := o.Dim(), o.SDE.Blocks()
	if len(t) == 0 || len(dst) != len(t)*d || len(x) != len(t)*n*d {
		return 0, fmt.Errorf("restore: Gaussian oracle: %d destinations, %d state values, %d times for d = %d, n = %d", len(dst), len(x), len(t), d, n)
	}
	return d, nil
}

// PredictX0 writes x̂₀ (B×d) of the states x (B×n·d) at the times t (B): sample.X0Predictor.
func (o *GaussianOracle) PredictX0(dst, x, t []float64) error {
	d, err := o.check(dst, x, t)
	if err != nil {
		return err
	}
	n := o.SDE.Blocks()
	if len(o.cbuf) < d {
		o.cbuf, o.wbuf = make([]float64, d), make([]float64, (n-1)*d+1)
	}
	c, w := o.cbuf, o.wbuf
	for b := range t {
		if err := o.at(t[b]); err != nil {
			return err
		}
		row := x[b*n*d : (b+1)*n*d]
		o.g.split(c, w, row, d, 1)
		o.denoise(dst[b*d:(b+1)*d], c, o.k)
	}
	return nil
}

// Score writes the last-block score (B×d): hold.Scorer.
func (o *GaussianOracle) Score(dst, x, t []float64) error {
	if err := o.PredictX0(dst, x, t); err != nil {
		return err
	}
	d, n := o.Dim(), o.SDE.Blocks()
	for b := range t {
		if err := o.at(t[b]); err != nil {
			return err
		}
		o.g.scoreFromX0(dst[b*d:(b+1)*d], dst[b*d:(b+1)*d], x[b*n*d:(b+1)*n*d], d, 1)
	}
	return nil
}

// ScoreVJP writes the score (B×d, when score is not nil) and gᵀ∂S/∂u (B×n·d) for the cotangents g
// (B×d): sample.DivScorer.
func (o *GaussianOracle) ScoreVJP(score, vjp, x, g, t []float64) error {
	d, n := o.Dim(), o.SDE.Blocks()
	if vjp == nil || len(vjp) != len(x) || len(g) != len(t)*d {
		return errors.New("restore: Gaussian oracle: the VJP needs a cotangent of B×d and a destination of B×n·d values")
	}
	if score != nil {
		if err := o.Score(score, x, t); err != nil {
			return err
		}
	}
	kg := make([]float64, d)
	for b := range t {
		if err := o.at(t[b]); err != nil {
			return err
		}
		gb := g[b*d : (b+1)*d]
		for j := range d { // (Kᵀg)_j
			var s float64
			for i := range d {
				s += o.k[i*d+j] * gb[i]
			}
			kg[j] = s
		}
		for k := range n {
			for j := range d {
				vjp[b*n*d+k*d+j] = o.g.rm*o.g.toC[k]*kg[j] - o.g.r[k]*gb[j]
			}
		}
	}
	return nil
}

// GaussianPosterior returns the law N(μ_y, Σ_y) of q0 given y = A q0 + σ_y n for the prior N(μ, C)
// (LinearPosterior without jitter: V = ACAᵀ + σ_y²I must be positive definite).
func GaussianPosterior(mean []float64, cov []float64, op Operator, y []float64, sigmaY float64) (mu, sigma []float64, err error) {
	if len(y) != op.Rows() {
		return nil, nil, fmt.Errorf("restore: posterior: %d measurements for an operator of %d rows", len(y), op.Rows())
	}
	p, err := NewLinearPosterior(mean, cov, op, sigmaY, 0)
	if err != nil {
		return nil, nil, err
	}
	mu = make([]float64, len(mean))
	p.PosteriorMean(mu, y)
	return mu, p.Sigma, nil
}
