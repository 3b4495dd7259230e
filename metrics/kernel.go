package metrics

import (
	"fmt"
	"math"
	"slices"
)

// medianPoints caps how many points of each set MedianBandwidth uses.
const medianPoints = 500

// MedianBandwidth returns the median heuristic's kernel width: the median
// Euclidean distance between distinct points of the pooled set x ∪ y. Sets
// larger than 500 points contribute an evenly strided subset of 500, so the
// cost stays under half a million distances. When every pooled point is the
// same, it returns 1.
func MedianBandwidth(x, y []float32, dim int) (float64, error) {
	n, m, err := checkSets("median bandwidth", x, y, dim, 1)
	if err != nil {
		return 0, err
	}
	pool := make([][]float32, 0, min(n, medianPoints)+min(m, medianPoints))
	for _, set := range []struct {
		pts []float32
		n   int
	}{{x, n}, {y, m}} {
		k := min(set.n, medianPoints)
		for i := range k {
			r := i * set.n / k
			pool = append(pool, set.pts[r*dim:(r+1)*dim])
		}
	}
	dists := make([]float64, 0, len(pool)*(len(pool)-1)/2)
	for i := range pool {
		for j := i + 1; j < len(pool); j++ {
			dists = append(dists, math.Sqrt(sqDist(pool[i], pool[j])))
		}
	}
	slices.Sort(dists)
	h := len(dists) / 2
	med := dists[h]
	if len(dists)%2 == 0 {
		med = (dists[h-1] + dists[h]) / 2
	}
	if !(med > 0) {
		return 1, nil
	}
	return med, nil
}

func sqDist(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		d := float64(a[i]) - float64(b[i])
		s += d * d
	}
	return s
}

// MMD returns the squared maximum mean discrepancy between x and y with the
// Gaussian (RBF) kernel k(a, b) = exp(−|a − b|² / (2σ²)) whose σ is
// MedianBandwidth(x, y, dim). See MMDWithBandwidth for the estimator.
func MMD(x, y []float32, dim int) (float64, error) {
	sigma, err := MedianBandwidth(x, y, dim)
	if err != nil {
		return 0, err
	}
	return MMDWithBandwidth(x, y, dim, sigma)
}

// MMDWithBandwidth returns the unbiased estimate of the squared MMD with
// the RBF kernel k(a, b) = exp(−|a − b|² / (2σ²)) (Gretton et al. 2012,
// MMD²_u):
//
//	1/(n(n−1)) Σ_{i≠j} k(xᵢ, xⱼ) + 1/(m(m−1)) Σ_{i≠j} k(yᵢ, yⱼ) − 2/(nm) Σ_{i,j} k(xᵢ, yⱼ)
//
// Its expectation is the population MMD², so it can be slightly negative
// when the distributions agree. Each set needs at least 2 points.
func MMDWithBandwidth(x, y []float32, dim int, sigma float64) (float64, error) {
	n, m, err := checkSets("MMD", x, y, dim, 2)
	if err != nil {
		return 0, err
	}
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return 0, fmt.Errorf("metrics: MMD: bandwidth %v", sigma)
	}
	scale := -1 / (2 * sigma * sigma)
	kernel := func(d2 float64) float64 { return math.Exp(scale * d2) }
	kxx := pairSum(x, x, dim, true, kernel)
	kyy := pairSum(y, y, dim, true, kernel)
	kxy := pairSum(x, y, dim, false, kernel)
	fn, fm := float64(n), float64(m)
	return kxx/(fn*(fn-1)) + kyy/(fm*(fm-1)) - 2*kxy/(fn*fm), nil
}

// EnergyDistance returns the energy distance between x and y,
//
//	D² = 2 E|X − Y| − E|X − X'| − E|Y − Y'|
//
// (Székely and Rizzo; the squared form, zero exactly when the distributions
// agree), estimated without bias: the within-set means leave out the i = j
// terms (U-statistics), the cross mean takes all n·m pairs. Each set needs
// at least 2 points.
func EnergyDistance(x, y []float32, dim int) (float64, error) {
	n, m, err := checkSets("energy distance", x, y, dim, 2)
	if err != nil {
		return 0, err
	}
	dist := math.Sqrt
	dxx := pairSum(x, x, dim, true, dist)
	dyy := pairSum(y, y, dim, true, dist)
	dxy := pairSum(x, y, dim, false, dist)
	fn, fm := float64(n), float64(m)
	return 2*dxy/(fn*fm) - dxx/(fn*(fn-1)) - dyy/(fm*(fm-1)), nil
}

// pairSum returns Σ f(|aᵢ − bⱼ|²) over all pairs, or over i ≠ j when a and
// b are the same set (each unordered pair counted twice, as in the sum).
func pairSum(a, b []float32, dim int, same bool, f func(float64) float64) float64 {
	na, nb := len(a)/dim, len(b)/dim
	total := 0.0
	for i := range na {
		ai := a[i*dim : (i+1)*dim]
		if same {
			row := 0.0
			for j := i + 1; j < na; j++ {
				row += f(sqDist(ai, a[j*dim:(j+1)*dim]))
			}
			total += 2 * row
			continue
		}
		row := 0.0
		for j := range nb {
			row += f(sqDist(ai, b[j*dim:(j+1)*dim]))
		}
		total += row
	}
	return total
}
