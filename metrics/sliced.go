// Package metrics measures how far a set of generated points is from the
// data: sample-to-sample distances for any dimension (sliced Wasserstein,
// MMD, energy distance) and, for 1-D samples of a Gaussian mixture, the
// exact Wasserstein-1 distance to the mixture and the share of samples in
// each mode.
//
// Point sets are row-major float32 slices with an explicit dimension, as
// data.Source fills them. Sums run in float64. The functions are plain
// loops; SlicedWasserstein spreads its directions over the worker pool
// (internal/parallel) and sums them in order, so its bits do not depend on
// the number of threads. The pairwise ones cost O((n+m)²·dim), meant for a
// few thousand points.
package metrics

import (
	"fmt"
	"math"

	"holdgo/internal/parallel"
	"holdgo/rng"
)

// checkSets validates two point sets of dimension dim and returns their
// sizes.
func checkSets(what string, x, y []float32, dim, minPoints int) (int, int, error) {
	switch {
	case dim < 1:
		return 0, 0, fmt.Errorf("metrics: %s: dimension %d < 1", what, dim)
	case len(x)%dim != 0 || len(y)%dim != 0:
		return 0, 0, fmt.Errorf("metrics: %s: %d and %d values are not multiples of dimension %d", what, len(x), len(y), dim)
	case len(x)/dim < minPoints || len(y)/dim < minPoints:
		return 0, 0, fmt.Errorf("metrics: %s: needs at least %d points in each set, have %d and %d", what, minPoints, len(x)/dim, len(y)/dim)
	}
	return len(x) / dim, len(y) / dim, nil
}

// SlicedWasserstein returns the sliced Wasserstein-p distance between the
// point sets x and y (n × dim and m × dim, row-major):
//
//	SW_p = ( (1/K) Σ_k W_p(θ_k·x, θ_k·y)^p )^{1/p}
//
// over K = projections directions θ_k drawn uniformly on the unit sphere
// from rng.New(seed) (normalised Gaussian vectors), each 1-D distance
// computed exactly between the projected empirical distributions (see
// Wasserstein1D; n and m may differ). p is 1 or 2 (any p ≥ 1 works; those
// are the usual ones). For dim 1 every direction is ±1, so the result is
// the exact 1-D distance and projections and seed are not used.
func SlicedWasserstein(x, y []float32, dim, p, projections int, seed uint64) (float64, error) {
	n, m, err := checkSets("sliced Wasserstein", x, y, dim, 1)
	if err != nil {
		return 0, err
	}
	if p < 1 {
		return 0, fmt.Errorf("metrics: sliced Wasserstein: p = %d < 1", p)
	}
	if dim == 1 {
		return wasserstein1D(toFloat64(x), toFloat64(y), p), nil
	}
	if projections < 1 {
		return 0, fmt.Errorf("metrics: sliced Wasserstein: %d projections", projections)
	}
	// The directions in order from one stream, then the 1-D distances on
	// the worker pool, summed in the directions' order: the same bits on
	// any number of threads.
	rng := rng.New(seed)
	thetas := make([]float64, projections*dim)
	for k := range projections {
		theta := thetas[k*dim : (k+1)*dim]
		norm := 0.0
		for norm < 1e-12 {
			norm = 0
			for i := range theta {
				theta[i] = rng.Normal()
				norm += theta[i] * theta[i]
			}
		}
		norm = math.Sqrt(norm)
		for i := range theta {
			theta[i] /= norm
		}
	}
	dists := make([]float64, projections)
	parallel.For(projections, 8, func(lo, hi int) {
		px, py := make([]float64, n), make([]float64, m)
		scratch := make([]uint64, 2*max(n, m))
		for k := lo; k < hi; k++ {
			theta := thetas[k*dim : (k+1)*dim]
			project(x, theta, px)
			project(y, theta, py)
			sortFloats(px, scratch)
			sortFloats(py, scratch)
			dists[k] = sortedWassersteinPow(px, py, p)
		}
	})
	total := 0.0
	for _, d := range dists {
		total += d
	}
	return math.Pow(total/float64(projections), 1/float64(p)), nil
}

func project(pts []float32, theta, dst []float64) {
	dim := len(theta)
	for i := range dst {
		s := 0.0
		for j, t := range theta {
			s += float64(pts[i*dim+j]) * t
		}
		dst[i] = s
	}
}

func toFloat64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

// Wasserstein1D returns the exact Wasserstein-p distance between the
// empirical distributions of the 1-D samples x and y (sizes may differ):
// (∫₀¹ |F⁻¹(u) − G⁻¹(u)|^p du)^{1/p} over the two quantile functions.
func Wasserstein1D(x, y []float32, p int) (float64, error) {
	if _, _, err := checkSets("Wasserstein", x, y, 1, 1); err != nil {
		return 0, err
	}
	if p < 1 {
		return 0, fmt.Errorf("metrics: Wasserstein: p = %d < 1", p)
	}
	return wasserstein1D(toFloat64(x), toFloat64(y), p), nil
}

func wasserstein1D(x, y []float64, p int) float64 {
	return math.Pow(wassersteinPow(x, y, p), 1/float64(p))
}

// wassersteinPow returns W_p^p between the empirical distributions of x
// and y; it sorts them in place. The quantile functions are steps at
// multiples of 1/n and 1/m; positions along [0, 1] are kept as integers in
// units of 1/(n·m), so the merge is exact.
func wassersteinPow(x, y []float64, p int) float64 {
	sortFloats(x, nil)
	sortFloats(y, nil)
	return sortedWassersteinPow(x, y, p)
}

// sortedWassersteinPow is wassersteinPow of x and y sorted in ascending order.
func sortedWassersteinPow(x, y []float64, p int) float64 {
	n, m := int64(len(x)), int64(len(y))
	var i, j, at int64
	sum := 0.0
	for i < n && j < m {
		nextX, nextY := (i+1)*m, (j+1)*n
		next := min(nextX, nextY)
		d := math.Abs(x[i] - y[j])
		var c float64
		switch p {
		case 1:
			c = d
		case 2:
			c = d * d
		default:
			c = math.Pow(d, float64(p))
		}
		sum += float64(next-at) * c
		at = next
		if nextX == next {
			i++
		}
		if nextY == next {
			j++
		}
	}
	return sum / (float64(n) * float64(m))
}
