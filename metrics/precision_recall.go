package metrics

import (
	"fmt"

	"holdgo/internal/parallel"
)

// PR is the improved precision and recall of Kynkäänniemi et al. (2019, "Improved Precision and
// Recall Metric for Assessing Generative Models", NeurIPS), with the per-point verdicts behind them.
//
// Each set stands for a manifold: the union of the balls around its points whose radius is the
// distance from the point to its k-th nearest neighbour in the same set (the point itself not
// counted). A point φ lies in the manifold of a set Φ when
//
//	∃ φ' ∈ Φ:  ‖φ − φ'‖ ≤ ‖φ' − NN_k(φ', Φ)‖.
//
// Precision is the fraction of generated points inside the real manifold (are the samples
// plausible?), recall the fraction of real points inside the generated manifold (is the data
// covered?). Both are 1 for identical sets; with independent draws of the same distribution they
// stay below 1 by an amount that depends on k, the sizes and the dimension, so compare with the
// value of two data sets of the same sizes (the floor), not with 1.
type PR struct {
	Precision, Recall float64
	// GenIn[i] says whether generated point i lies in the real manifold; RealIn[j] whether real
	// point j lies in the generated manifold (for per-class breakdowns).
	GenIn, RealIn []bool
}

// PrecisionRecall returns the improved precision and recall of the generated points gen against
// the real points real (both n × dim, row-major) with k nearest neighbours (the paper uses 3).
// Distances are evaluated in float64; the cost is O((n_real + n_gen)² · dim), spread over the
// available threads.
func PrecisionRecall(real, gen []float32, dim, k int) (PR, error) {
	if k < 1 {
		return PR{}, fmt.Errorf("metrics: precision/recall: k = %d (want ≥ 1)", k)
	}
	nr, ng, err := checkSets("precision/recall", real, gen, dim, k+1)
	if err != nil {
		return PR{}, err
	}
	rr, gr := kthRadii(real, nr, dim, k), kthRadii(gen, ng, dim, k)
	res := PR{GenIn: inManifold(gen, ng, real, nr, rr, dim), RealIn: inManifold(real, nr, gen, ng, gr, dim)}
	res.Precision, res.Recall = fraction(res.GenIn), fraction(res.RealIn)
	return res, nil
}

// kthRadii returns, for each of the n points of x, the squared distance to its k-th nearest
// neighbour among the others.
func kthRadii(x []float32, n, dim, k int) []float64 {
	out := make([]float64, n)
	parallel.For(n, 64, func(lo, hi int) {
		best := make([]float64, k) // the k smallest squared distances, ascending
		for i := lo; i < hi; i++ {
			m := 0
			a := x[i*dim : (i+1)*dim]
			for j := range n {
				if j == i {
					continue
				}
				d := sqDist(a, x[j*dim:(j+1)*dim])
				if m == k && d >= best[k-1] {
					continue
				}
				p := min(m, k-1) // insert d, dropping the largest when full
				for p > 0 && best[p-1] > d {
					best[p] = best[p-1]
					p--
				}
				best[p] = d
				m = min(m+1, k)
			}
			out[i] = best[k-1]
		}
	})
	return out
}

// inManifold says, for each of the n points of x, whether it lies within the radius (squared, r2)
// of some of the m points of y.
func inManifold(x []float32, n int, y []float32, m int, r2 []float64, dim int) []bool {
	out := make([]bool, n)
	parallel.For(n, 64, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			a := x[i*dim : (i+1)*dim]
			for j := range m {
				if sqDist(a, y[j*dim:(j+1)*dim]) <= r2[j] {
					out[i] = true
					break
				}
			}
		}
	})
	return out
}

func fraction(v []bool) float64 {
	c := 0
	for _, b := range v {
		if b {
			c++
		}
	}
	return float64(c) / float64(len(v))
}
