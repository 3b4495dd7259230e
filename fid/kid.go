package fid

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"

	"holdgo/rng"
)

// KIDOptions are the subset sampling of KID (clean-fid's defaults: 100
// subsets of at most 1000 points).
type KIDOptions struct {
	Subsets    int
	SubsetSize int
	Seed       uint64
}

// DefaultKID is clean-fid's configuration.
var DefaultKID = KIDOptions{Subsets: 100, SubsetSize: 1000, Seed: 1}

// KID returns the kernel inception distance between the feature sets x and
// y (rows of width dim) and its standard error (see the package
// documentation).
func KID(x, y []float32, dim int, opt KIDOptions) (mean, stderr float64, err error) {
	if dim < 1 || len(x)%dim != 0 || len(y)%dim != 0 {
		return 0, 0, fmt.Errorf("kid: feature sets of %d and %d values are not rows of width %d", len(x), len(y), dim)
	}
	nx, ny := len(x)/dim, len(y)/dim
	m := min(nx, ny, opt.SubsetSize)
	if m < 2 {
		return 0, 0, fmt.Errorf("kid: %w: %d and %d feature rows (the unbiased estimate needs ≥ 2 of each)", ErrTooFew, nx, ny)
	}
	if opt.Subsets < 1 {
		return 0, 0, fmt.Errorf("kid: %d subsets (want ≥ 1)", opt.Subsets)
	}
	r := rng.New(opt.Seed)
	xs, ys := make([]float64, m*dim), make([]float64, m*dim)
	gram := make([]float64, m*m)
	vals := make([]float64, opt.Subsets)
	for s := range vals {
		pick(xs, x, dim, m, r)
		pick(ys, y, dim, m, r)
		vals[s] = mmd2Unbiased(xs, ys, m, dim, gram)
	}
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	if len(vals) > 1 && (nx > m || ny > m) {
		var ss float64
		for _, v := range vals {
			ss += (v - mean) * (v - mean)
		}
		stderr = math.Sqrt(ss/float64(len(vals)-1)) / math.Sqrt(float64(len(vals)))
	}
	return mean, stderr, nil
}

// pick copies m rows of src (rows of width dim) drawn without replacement
// into dst as float64 (a partial Fisher–Yates shuffle of the row indices;
// all rows, in order, when m is the row count).
func pick(dst []float64, src []float32, dim, m int, r *rng.RNG) {
	n := len(src) / dim
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if m < n {
		for i := range m {
			j := i + r.IntN(n-i)
			idx[i], idx[j] = idx[j], idx[i]
		}
	}
	for i, row := range idx[:m] {
		for j, v := range src[row*dim : (row+1)*dim] {
			dst[i*dim+j] = float64(v)
		}
	}
}

// mmd2Unbiased is the unbiased MMD² of the m×dim sets x and y with the
// kernel (aᵀb/dim + 1)³; gram is m×m scratch.
func mmd2Unbiased(x, y []float64, m, dim int, gram []float64) float64 {
	a := blas64.General{Rows: m, Cols: dim, Stride: dim, Data: x}
	b := blas64.General{Rows: m, Cols: dim, Stride: dim, Data: y}
	g := blas64.General{Rows: m, Cols: m, Stride: m, Data: gram}
	kernelSum := func(p, q blas64.General, offDiagonal bool) float64 {
		blas64.Gemm(blas.NoTrans, blas.Trans, 1/float64(dim), p, q, 0, g)
		var s float64
		for i := range m {
			for j, v := range gram[i*m : (i+1)*m] {
				if offDiagonal && i == j {
					continue
				}
				k := v + 1
				s += k * k * k
			}
		}
		return s
	}
	xx := kernelSum(a, a, true)
	yy := kernelSum(b, b, true)
	xy := kernelSum(a, b, false)
	fm := float64(m)
	return (xx+yy)/(fm*(fm-1)) - 2*xy/(fm*fm)
}
