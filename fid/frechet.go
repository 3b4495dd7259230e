// Package fid computes the Fréchet distance (FID) and the kernel distance
// (KID) between two sets of image features, and the feature networks they
// are computed with: Inception-v3 in the pytorch-fid variant (layers
// package, weights a user supplies) and a small classifier trained by
// holdgo (layers.Classifier), the offline choice for 28×28 data.
//
// # Fréchet distance
//
// With μ₁, Σ₁ and μ₂, Σ₂ the means and (unbiased, n−1) covariances of the
// two feature sets (Heusel et al. 2017; pytorch-fid's calculate_frechet_distance):
//
//	FD = ‖μ₁ − μ₂‖² + tr Σ₁ + tr Σ₂ − 2 tr (Σ₁Σ₂)^{1/2}.
//
// pytorch-fid takes scipy.linalg.sqrtm(Σ₁Σ₂), a Schur method on a
// non-symmetric product. Here everything is float64 and symmetric: with
// Σ₁ = L Lᵀ (Cholesky with complete pivoting, gonum's Pstrf, so a
// rank-deficient Σ₁ — fewer samples than dimensions — gives a d×r factor L),
// the product Σ₁Σ₂ = L (Lᵀ Σ₂) has the same non-zero eigenvalues as the
// symmetric positive semi-definite r×r matrix M = Lᵀ Σ₂ L, so
//
//	tr (Σ₁Σ₂)^{1/2} = Σᵢ √λᵢ(M)
//
// with gonum's symmetric eigenvalues (round-off negatives clipped to 0).
// This is the symmetric-eigendecomposition route of the issue with the
// square root of Σ₁ replaced by its Cholesky factor: the same M up to an
// orthogonal similarity, at a third of the cost (no eigenvectors). This never produces the complex
// parts pytorch-fid has to discard, and agrees with its value to ~1e-9 on the
// committed references (scripts/fid_ref.py).
//
// # Kernel distance
//
// KID (Bińkowski et al. 2018) as clean-fid's kernel_distance: the unbiased
// MMD² with the cubic polynomial kernel k(x, y) = (xᵀy/d + 1)³ averaged over
// 100 random subsets of m = min(n₁, n₂, 1000) points of each set (drawn
// without replacement):
//
//	MMD²ᵤ = [Σ_{i≠j} k(xᵢ,xⱼ) + Σ_{i≠j} k(yᵢ,yⱼ)]/(m(m−1)) − 2 Σ_{i,j} k(xᵢ,yⱼ)/m².
//
// The standard error is the sample standard deviation of the subset values
// over √subsets (clean-fid reports the mean only). When both sets have at
// most m points every subset is the whole set and the error is 0.
package fid

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack/lapack64"
	"gonum.org/v1/gonum/mat"

	"holdgo/data"
)

// Stats are the mean and covariance of a feature set (pytorch-fid's mu and
// sigma).
type Stats struct {
	Dim   int
	N     int       // features the statistics were computed from (0 if unknown, e.g. loaded)
	Mu    []float64 // Dim
	Sigma []float64 // Dim×Dim, row-major, symmetric
}

// ErrTooFew is wrapped when a set has too few points for a statistic.
var ErrTooFew = errors.New("too few samples")

// ComputeStats returns the mean and the unbiased covariance (numpy.cov with
// rowvar=False) of n feature rows of width dim, accumulated in float64.
func ComputeStats(feats []float32, dim int) (*Stats, error) {
	if dim < 1 || len(feats)%dim != 0 {
		return nil, fmt.Errorf("fid statistics: %d values are not rows of width %d", len(feats), dim)
	}
	n := len(feats) / dim
	if n < 2 {
		return nil, fmt.Errorf("fid statistics: %w: %d feature rows (a covariance needs ≥ 2)", ErrTooFew, n)
	}
	mu := make([]float64, dim)
	for i := range n {
		for j, v := range feats[i*dim : (i+1)*dim] {
			mu[j] += float64(v)
		}
	}
	for j := range mu {
		mu[j] /= float64(n)
	}
	centred := make([]float64, n*dim)
	for i := range n {
		for j, v := range feats[i*dim : (i+1)*dim] {
			centred[i*dim+j] = float64(v) - mu[j]
		}
	}
	sigma := make([]float64, dim*dim)
	x := blas64.General{Rows: n, Cols: dim, Stride: dim, Data: centred}
	c := blas64.Symmetric{Uplo: blas.Upper, N: dim, Stride: dim, Data: sigma}
	blas64.Syrk(blas.Trans, 1/float64(n-1), x, 0, c)
	for i := range dim { // mirror the upper triangle
		for j := i + 1; j < dim; j++ {
			sigma[j*dim+i] = sigma[i*dim+j]
		}
	}
	return &Stats{Dim: dim, N: n, Mu: mu, Sigma: sigma}, nil
}

// Check reports statistics whose sizes or values cannot be used.
func (s *Stats) Check() error {
	if s.Dim < 1 || len(s.Mu) != s.Dim || len(s.Sigma) != s.Dim*s.Dim {
		return fmt.Errorf("fid statistics: mu has %d values and sigma %d for dimension %d (want d and d×d)", len(s.Mu), len(s.Sigma), s.Dim)
	}
	for _, v := range append(append([]float64(nil), s.Mu...), s.Sigma...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("fid statistics: mu or sigma holds NaN or Inf")
		}
	}
	return nil
}

// FrechetDistance returns the Fréchet distance between two Gaussians given
// by their statistics (see the package documentation for the method).
func FrechetDistance(a, b *Stats) (float64, error) {
	if err := a.Check(); err != nil {
		return 0, err
	}
	if err := b.Check(); err != nil {
		return 0, err
	}
	if a.Dim != b.Dim {
		return 0, fmt.Errorf("fid: feature dimensions differ: %d and %d (were both computed with the same network?)", a.Dim, b.Dim)
	}
	d := a.Dim
	var meanTerm, trA, trB float64
	for i := range d {
		diff := a.Mu[i] - b.Mu[i]
		meanTerm += diff * diff
		trA += a.Sigma[i*d+i]
		trB += b.Sigma[i*d+i]
	}
	trRoot, err := traceSqrtProduct(a.Sigma, b.Sigma, d)
	if err != nil {
		return 0, err
	}
	return meanTerm + trA + trB - 2*trRoot, nil
}

// traceSqrtProduct returns tr (Σ₁Σ₂)^{1/2} for symmetric positive
// semi-definite d×d matrices: Σ₁ = L Lᵀ by Cholesky with complete pivoting
// (L = P Uᵀ, d×r, r the numerical rank), then the r eigenvalues of the
// symmetric M = Lᵀ Σ₂ L, which are the non-zero eigenvalues of Σ₁Σ₂.
func traceSqrtProduct(s1, s2 []float64, d int) (float64, error) {
	u := append([]float64(nil), s1...)
	piv := make([]int, d)
	_, rank, _ := lapack64.Pstrf(blas64.Symmetric{Uplo: blas.Upper, N: d, Stride: d, Data: u}, piv, -1, make([]float64, 2*d))
	if rank == 0 {
		return 0, nil
	}
	// Ur: the first rank rows of U (upper trapezoidal; zero below the diagonal).
	ur := make([]float64, rank*d)
	for i := range rank {
		copy(ur[i*d+i:(i+1)*d], u[i*d+i:(i+1)*d])
	}
	// Pᵀ Σ₂ P: (Pᵀ Σ₂ P)[i, j] = Σ₂[piv[i], piv[j]].
	s2p := make([]float64, d*d)
	for i := range d {
		row := s2[piv[i]*d : (piv[i]+1)*d]
		for j := range d {
			s2p[i*d+j] = row[piv[j]]
		}
	}
	t := make([]float64, rank*d)
	blas64.Gemm(blas.NoTrans, blas.NoTrans, 1, blas64.General{Rows: rank, Cols: d, Stride: d, Data: ur},
		blas64.General{Rows: d, Cols: d, Stride: d, Data: s2p}, 0, blas64.General{Rows: rank, Cols: d, Stride: d, Data: t})
	m := make([]float64, rank*rank)
	blas64.Gemm(blas.NoTrans, blas.Trans, 1, blas64.General{Rows: rank, Cols: d, Stride: d, Data: t},
		blas64.General{Rows: rank, Cols: d, Stride: d, Data: ur}, 0, blas64.General{Rows: rank, Cols: rank, Stride: rank, Data: m})
	sym := mat.NewSymDense(rank, nil)
	for i := range rank {
		for j := i; j < rank; j++ {
			sym.SetSym(i, j, 0.5*(m[i*rank+j]+m[j*rank+i]))
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, false) {
		return 0, errors.New("fid: the eigendecomposition of Lᵀ·Σ₂·L did not converge")
	}
	var tr float64
	for _, l := range eig.Values(nil) {
		tr += math.Sqrt(max(l, 0))
	}
	return tr, nil
}

// ErrNotCovariance is wrapped by the error of CheckCovariance.
var ErrNotCovariance = errors.New("sigma is not a covariance matrix")

// Tolerances of CheckCovariance, relative to the largest diagonal entry: a
// float64 covariance written by numpy is symmetric to rounding, and its
// smallest eigenvalue is ≥ −(a few ulps) × its scale.
const (
	symmetryTol = 1e-9
	psdTol      = 1e-9
)

// CheckCovariance checks that Sigma is a covariance: symmetric within
// symmetryTol and positive semi-definite within psdTol (a Cholesky
// factorisation of Σ + psdTol·max(diag)·I succeeds), naming the first
// asymmetric entry. Statistics that fail it give a meaningless (even
// negative) FID.
func (s *Stats) CheckCovariance() error {
	d := s.Dim
	scale := 0.0
	for i := range d {
		v := s.Sigma[i*d+i]
		if v < 0 {
			return fmt.Errorf("fid statistics: %w: sigma[%d, %d] = %g is a negative variance", ErrNotCovariance, i, i, v)
		}
		scale = max(scale, v)
	}
	if scale == 0 { // all variances zero: a covariance only if it is zero
		for k, v := range s.Sigma {
			if v != 0 {
				return fmt.Errorf("fid statistics: %w: every variance is 0 but sigma[%d, %d] = %g", ErrNotCovariance, k/d, k%d, v)
			}
		}
		return nil
	}
	for i := range d {
		for j := i + 1; j < d; j++ {
			a, b := s.Sigma[i*d+j], s.Sigma[j*d+i]
			if math.Abs(a-b) > symmetryTol*scale {
				return fmt.Errorf("fid statistics: %w: not symmetric: sigma[%d, %d] = %g but sigma[%d, %d] = %g", ErrNotCovariance, i, j, a, j, i, b)
			}
		}
	}
	sym := mat.NewSymDense(d, nil)
	for i := range d {
		for j := i; j < d; j++ {
			v := 0.5 * (s.Sigma[i*d+j] + s.Sigma[j*d+i])
			if i == j {
				v += psdTol * scale
			}
			sym.SetSym(i, j, v)
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return fmt.Errorf("fid statistics: %w: it has a negative eigenvalue below −%g × its largest variance (not positive semi-definite)", ErrNotCovariance, psdTol)
	}
	return nil
}

// LoadStats reads pytorch-fid statistics: a .npz file with the arrays mu (d)
// and sigma (d, d).
func LoadStats(path string) (*Stats, error) {
	arrays, err := data.ReadNPZ(path)
	if err != nil {
		return nil, err
	}
	mu, sigma := arrays["mu"], arrays["sigma"]
	if mu == nil || sigma == nil {
		return nil, fmt.Errorf("%s: want the arrays mu and sigma (pytorch-fid statistics), found %v", path, keys(arrays))
	}
	d := len(mu.Data)
	if len(mu.Shape) != 1 || len(sigma.Shape) != 2 || sigma.Shape[0] != d || sigma.Shape[1] != d {
		return nil, fmt.Errorf("%s: mu of shape %v and sigma of shape %v (want (d,) and (d, d))", path, mu.Shape, sigma.Shape)
	}
	s := &Stats{Dim: d, Mu: mu.Data, Sigma: sigma.Data}
	if err := s.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := s.CheckCovariance(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// SaveStats writes the statistics as pytorch-fid does (numpy.savez with mu
// and sigma, float64).
func SaveStats(path string, s *Stats) error {
	if err := s.Check(); err != nil {
		return err
	}
	return data.WriteNPZ(path, map[string]*data.Array{
		"mu":    {Shape: []int{s.Dim}, Dtype: data.Float64, Data: s.Mu},
		"sigma": {Shape: []int{s.Dim, s.Dim}, Dtype: data.Float64, Data: s.Sigma},
	})
}

func keys(m map[string]*data.Array) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
