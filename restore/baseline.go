package restore

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Baselines anyone can recompute without a diffusion model (§5 of the specification; the
// numbers of scripts/restore_baselines.py): with the data's mean μ and covariance C,
//
//   - mean fill: x = A⁺y + (I − A⁺A)μ — the measurement where it says something, the mean elsewhere;
//   - the Gaussian posterior mean (LMMSE): μ_y = μ + G(y − Aμ), G = CAᵀ(ACAᵀ + s²I)⁻¹;
//   - one Gaussian posterior sample: μ_y + L_y z, L_yL_yᵀ = Σ_y = C − GAC, z ~ N(0, I);
//
// with s = max(σ_y, BaselineJitter) so that a noiseless measurement keeps V invertible. A restoration
// method is worth its cost where it beats mean fill and is credible between one Gaussian-posterior
// sample and LMMSE (a single posterior sample has twice the LMMSE's expected squared error when the
// prior is Gaussian).

// BaselineJitter is the smallest s of V = ACAᵀ + s²I (the reference script's 1e-3).
const BaselineJitter = 1e-3

// MeanFill writes x = A⁺y + (I − A⁺A)μ (d values).
func MeanFill(x []float64, op Operator, y, mean []float64) {
	am := make([]float64, op.Rows())
	op.Apply(am, mean)
	for j := range am {
		am[j] = y[j] - am[j]
	}
	Pinv(op, x, am) // A⁺(y − Aμ)
	for i, v := range mean {
		x[i] += v
	}
}

// LinearPosterior is the posterior of q0 given y = A q0 + σ_y n under the prior N(μ, C) for one
// operator, factored once for every measurement of that operator:
//
//	V = ACAᵀ + s²I,  G = CAᵀV⁻¹,  μ_y = μ + G(y − Aμ),  Σ_y = C − GAC   (§2(c)),
//
// s = σ_y, or max(σ_y, BaselineJitter) for a baseline (NewLinearPosterior's jitter). V is factored by
// Cholesky; Σ_y is symmetrised with its diagonal clamped at 0.
type LinearPosterior struct {
	Op    Operator
	Mean  []float64
	G     *mat.Dense // d×m
	Sigma []float64  // Σ_y, d×d row-major
	am    []float64  // Aμ
	chol  *mat.Dense // lower factor of Σ_y (+ a tiny ridge), built by Sample on first use
}

// NewLinearPosterior factors the posterior of prior N(mean, cov) (cov d×d row-major, symmetric)
// under op with measurement noise max(sigmaY, jitter).
func NewLinearPosterior(mean, cov []float64, op Operator, sigmaY, jitter float64) (*LinearPosterior, error) {
	d, m := len(mean), op.Rows()
	if len(cov) != d*d || op.Dim() != d {
		return nil, fmt.Errorf("restore: posterior: %d mean values, %d covariance values, operator %d→%d", d, len(cov), op.Dim(), m)
	}
	s := math.Max(sigmaY, jitter)
	// AC (m×d): A applied to every column of C (C is symmetric, so column j is row j).
	ac := mat.NewDense(m, d, nil)
	col := make([]float64, m)
	for j := range d {
		op.Apply(col, cov[j*d:(j+1)*d])
		ac.SetCol(j, col)
	}
	v := mat.NewSymDense(m, nil)
	row := make([]float64, m)
	for i := range m {
		op.Apply(row, ac.RawRowView(i)) // (A (AC)ᵀ)ᵀ row i = A·(row i of AC) = (ACAᵀ)_{i,·}
		for j := i; j < m; j++ {
			val := row[j]
			if i == j {
				val += s * s
			}
			v.SetSym(i, j, val)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(v) {
		return nil, errors.New("restore: posterior: ACAᵀ + σ_y²I is not positive definite")
	}
	var gainT mat.Dense // V⁻¹AC (m×d) = Gᵀ
	if err := ch.SolveTo(&gainT, ac); err != nil {
		return nil, err
	}
	p := &LinearPosterior{Op: op, Mean: append([]float64(nil), mean...), G: mat.DenseCopyOf(gainT.T()), am: make([]float64, m)}
	op.Apply(p.am, mean)
	var gac mat.Dense // GAC = (AC)ᵀ V⁻¹ AC (d×d)
	gac.Mul(ac.T(), &gainT)
	p.Sigma = make([]float64, d*d)
	for i := range d {
		for k := range d {
			p.Sigma[i*d+k] = cov[i*d+k] - gac.At(i, k)
		}
	}
	for i := range d {
		p.Sigma[i*d+i] = math.Max(p.Sigma[i*d+i], 0) // a measured pixel's variance, 0 up to rounding when σ_y = 0
		for k := i + 1; k < d; k++ {
			a := 0.5 * (p.Sigma[i*d+k] + p.Sigma[k*d+i])
			p.Sigma[i*d+k], p.Sigma[k*d+i] = a, a
		}
	}
	return p, nil
}

// PosteriorMean writes μ_y = μ + G(y − Aμ) (d values).
func (p *LinearPosterior) PosteriorMean(dst, y []float64) {
	res := mat.NewVecDense(len(p.am), nil)
	for j, a := range p.am {
		res.SetVec(j, y[j]-a)
	}
	out := mat.NewVecDense(len(dst), dst)
	out.MulVec(p.G, res)
	for i, v := range p.Mean {
		dst[i] += v
	}
}

// Sample writes μ_y + L_y z (d values) for z ~ N(0, I) (d values), L_y the Cholesky factor of
// Σ_y + 1e-8·I (the reference script's ridge: Σ_y is singular along measured directions).
func (p *LinearPosterior) Sample(dst, y, z []float64) error {
	d := len(p.Mean)
	if p.chol == nil {
		sym := mat.NewSymDense(d, nil)
		for i := range d {
			for k := i; k < d; k++ {
				v := p.Sigma[i*d+k]
				if i == k {
					v += 1e-8
				}
				sym.SetSym(i, k, v)
			}
		}
		var ch mat.Cholesky
		if !ch.Factorize(sym) {
			return errors.New("restore: posterior sample: Σ_y + 1e-8·I is not positive definite")
		}
		var l mat.TriDense
		ch.LTo(&l)
		p.chol = mat.DenseCopyOf(&l)
	}
	p.PosteriorMean(dst, y)
	for i := range d {
		var s float64
		for k := 0; k <= i; k++ {
			s += p.chol.At(i, k) * z[k]
		}
		dst[i] += s
	}
	return nil
}

// Moments returns the mean (d) and the unbiased covariance (d×d row-major, divided by n − 1) of n
// images of d values each (rows of x), plus ridge on the diagonal (the reference script's 1e-6).
func Moments(x []float32, n, d int, ridge float64) (mean, cov []float64, err error) {
	if n < 2 || len(x) != n*d {
		return nil, nil, fmt.Errorf("restore: moments of %d values as %d images of %d: want ≥ 2 whole images", len(x), n, d)
	}
	mean = make([]float64, d)
	for i := range n {
		for j, v := range x[i*d : (i+1)*d] {
			mean[j] += float64(v)
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	// Centred rows in blocks, accumulated into the covariance by a symmetric rank-k update.
	const block = 256
	c := mat.NewSymDense(d, nil)
	buf := make([]float64, block*d)
	for lo := 0; lo < n; lo += block {
		hi := min(n, lo+block)
		for i := lo; i < hi; i++ {
			for j, v := range x[i*d : (i+1)*d] {
				buf[(i-lo)*d+j] = float64(v) - mean[j]
			}
		}
		rows := mat.NewDense(hi-lo, d, buf[:(hi-lo)*d])
		c.SymRankK(c, 1, rows.T())
	}
	cov = make([]float64, d*d)
	for i := range d {
		for j := range d {
			cov[i*d+j] = c.At(i, j) / float64(n-1)
		}
		cov[i*d+i] += ridge
	}
	return mean, cov, nil
}
