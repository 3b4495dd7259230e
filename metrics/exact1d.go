package metrics

import (
	"fmt"
	"math"
	"slices"

	"holdgo/data"
)

// W1Mixture returns the Wasserstein-1 distance between the empirical
// distribution of the 1-D samples and the 1-D mixture m,
//
//	W1 = ∫ |F_n(x) − F(x)| dx,
//
// in closed form rather than by quadrature: F_n is constant (i/n) between
// consecutive sorted samples, F is increasing, so on each such interval the
// integral is c·(b − a) − (G(b) − G(a)) or its negative, split where
// F = c (found by bisection to float64 resolution), with G the
// antiderivative of F (data.Mixture.LowerPartial). The tails below the
// smallest and above the largest sample are G(s₁) and E[(X − sₙ)⁺]. The
// result is accurate to about 1e-12 absolute.
func W1Mixture(samples []float32, m data.Mixture) (float64, error) {
	if err := m.Validate(); err != nil {
		return 0, fmt.Errorf("metrics: W1: %w", err)
	}
	if m.Dim != 1 {
		return 0, fmt.Errorf("metrics: W1: mixture of dimension %d (want 1)", m.Dim)
	}
	if len(samples) == 0 {
		return 0, fmt.Errorf("metrics: W1: no samples")
	}
	s := sortedFinite(samples)
	if s == nil {
		return 0, fmt.Errorf("metrics: W1: samples hold NaN or Inf")
	}
	n := float64(len(s))
	mean := m.Mean()[0]
	total := m.LowerPartial(s[0])
	// E[(X − a)⁺] = E[(a − X)⁺] + E[X] − a.
	last := s[len(s)-1]
	total += m.LowerPartial(last) + mean - last
	ga := m.LowerPartial(s[0])
	for i := 1; i < len(s); i++ {
		a, b := s[i-1], s[i]
		gb := m.LowerPartial(b)
		if b > a {
			c := float64(i) / n
			switch {
			case m.CDF(b) <= c: // F ≤ c on [a, b]
				total += c*(b-a) - (gb - ga)
			case m.CDF(a) >= c: // F ≥ c on [a, b]
				total += (gb - ga) - c*(b-a)
			default:
				x := bisectCDF(m, c, a, b)
				gx := m.LowerPartial(x)
				total += c*(x-a) - (gx - ga) + (gb - gx) - c*(b-x)
			}
		}
		ga = gb
	}
	return total, nil
}

// bisectCDF finds x in [a, b] with m.CDF(x) = c, given CDF(a) < c < CDF(b).
func bisectCDF(m data.Mixture, c, a, b float64) float64 {
	for range 200 {
		mid := a + (b-a)/2
		if mid <= a || mid >= b {
			break
		}
		if m.CDF(mid) < c {
			a = mid
		} else {
			b = mid
		}
	}
	return a + (b-a)/2
}

func sortedFinite(samples []float32) []float64 {
	s := make([]float64, len(samples))
	for i, v := range samples {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		s[i] = f
	}
	slices.Sort(s)
	return s
}

// w1Pieces is the number of pieces W1CDF splits [lo, hi] into at least.
const w1Pieces = 100000

// W1CDF returns ∫_lo^hi |F_n(x) − cdf(x)| dx, the Wasserstein-1 distance
// between the empirical distribution of the 1-D samples and a distribution
// given by its CDF, by quadrature: 4-point Gauss–Legendre on pieces no
// wider than (hi − lo)/100000 that also break at every sample, so F_n is
// constant on each. [lo, hi] is widened to cover the samples; the caller
// makes it wide enough that cdf(lo) ≈ 0 and cdf(hi) ≈ 1 (what lies outside
// is not counted). For a mixture W1Mixture is exact and faster.
func W1CDF(samples []float32, cdf func(float64) float64, lo, hi float64) (float64, error) {
	if len(samples) == 0 {
		return 0, fmt.Errorf("metrics: W1: no samples")
	}
	if !(hi > lo) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, fmt.Errorf("metrics: W1: bad interval [%v, %v]", lo, hi)
	}
	s := sortedFinite(samples)
	if s == nil {
		return 0, fmt.Errorf("metrics: W1: samples hold NaN or Inf")
	}
	lo, hi = min(lo, s[0]), max(hi, s[len(s)-1])
	width := (hi - lo) / w1Pieces
	n := float64(len(s))
	// Gauss–Legendre nodes and weights on [−1, 1].
	nodes := [4]float64{-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526}
	weights := [4]float64{0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538}
	total := 0.0
	integrate := func(a, b, c float64) {
		if b <= a {
			return
		}
		pieces := int(math.Ceil((b - a) / width))
		h := (b - a) / float64(pieces)
		for k := range pieces {
			mid := a + (float64(k)+0.5)*h
			for q, z := range nodes {
				total += weights[q] * h / 2 * math.Abs(c-cdf(mid+z*h/2))
			}
		}
	}
	integrate(lo, s[0], 0)
	for i := 1; i < len(s); i++ {
		integrate(s[i-1], s[i], float64(i)/n)
	}
	integrate(s[len(s)-1], hi, 1)
	return total, nil
}

// ModeWeights assigns each sample (n × m.Dim, row-major) to the component
// of m with the highest posterior responsibility p(k | x) and returns the
// fraction of samples per component. The responsibilities come from
// log-densities, so a sample far from every component still goes to the
// nearest one in the posterior's sense; NaN or Inf samples are an error.
func ModeWeights(samples []float32, m data.Mixture) ([]float64, error) {
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("metrics: mode weights: %w", err)
	}
	if len(samples) == 0 || len(samples)%m.Dim != 0 {
		return nil, fmt.Errorf("metrics: mode weights: %d values for dimension %d", len(samples), m.Dim)
	}
	counts := make([]float64, m.Components())
	x := make([]float64, m.Dim)
	resp := make([]float64, m.Components())
	n := len(samples) / m.Dim
	for i := range n {
		for j := range x {
			x[j] = float64(samples[i*m.Dim+j])
			if math.IsNaN(x[j]) || math.IsInf(x[j], 0) {
				return nil, fmt.Errorf("metrics: mode weights: sample %d is %v", i, x[j])
			}
		}
		m.Responsibilities(x, resp)
		best := 0
		for c, r := range resp {
			if r > resp[best] {
				best = c
			}
		}
		counts[best]++
	}
	for c := range counts {
		counts[c] /= float64(n)
	}
	return counts, nil
}
