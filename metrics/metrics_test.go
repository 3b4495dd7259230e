package metrics

import (
	"math"
	"strconv"
	"testing"

	"holdgo/data"
	"holdgo/internal/parallel"
	"holdgo/tensor"
)

// gaussian returns n points of N(mean, std² I) in len(mean) dimensions.
func gaussian(rng *tensor.RNG, n int, mean []float64, std float64) []float32 {
	d := len(mean)
	out := make([]float32, n*d)
	for i := range out {
		out[i] = float32(mean[i%d] + std*rng.Normal())
	}
	return out
}

func shift(x []float32, s []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = v + float32(s[i%len(s)])
	}
	return out
}

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if !(math.Abs(got-want) <= tol) || math.IsNaN(got) {
		t.Errorf("%s = %.6g, want %.6g ± %.2g", name, got, want, tol)
	}
}

// Hand-computed quantile-function integrals for sets of different sizes:
// x = {0, 1}, y = {0, 0.5, 1} differ by 0.5 on u ∈ (1/3, 2/3].
func TestWasserstein1DByHand(t *testing.T) {
	x, y := []float32{1, 0}, []float32{0.5, 1, 0}
	w1, _ := Wasserstein1D(x, y, 1)
	w2, _ := Wasserstein1D(x, y, 2)
	near(t, "W1", w1, 1.0/6, 1e-15)
	near(t, "W2", w2, math.Sqrt(1.0/12), 1e-15)
	w, _ := Wasserstein1D([]float32{3}, []float32{-1, 0, 1, 2}, 1) // mean |3 − yⱼ|
	near(t, "W1 one point", w, 2.5, 1e-15)
	sw, _ := SlicedWasserstein(x, y, 1, 1, 0, 0)
	near(t, "SW1 in 1-D", sw, 1.0/6, 1e-15)
}

// Shifting a set by s moves every projection by θ·s, and the sorted
// projections keep their order, so SW2² = E[(θ·s)²] = |s|²/d and
// SW1 = |s| E|θ₁|, which is 2|s|/π in 2-D; only the directions are random.
func TestSlicedWassersteinOfShift(t *testing.T) {
	rng := tensor.NewRNG(1)
	x := gaussian(rng, 500, []float64{0, 0}, 1)
	s := []float64{0.3, 0.4}
	y := shift(x, s)
	sw2, err := SlicedWasserstein(x, y, 2, 2, 4000, 9)
	if err != nil {
		t.Fatal(err)
	}
	// Over 4000 directions the Monte Carlo error is ≈ 0.6% (SW2) and 0.5%
	// (SW1) of the value.
	near(t, "SW2", sw2, 0.5/math.Sqrt2, 0.03*0.5/math.Sqrt2)
	sw1, _ := SlicedWasserstein(x, y, 2, 1, 4000, 9)
	near(t, "SW1", sw1, 0.5*2/math.Pi, 0.03*0.5*2/math.Pi)
	again, _ := SlicedWasserstein(x, y, 2, 2, 4000, 9)
	if again != sw2 {
		t.Errorf("same seed gave %v then %v", sw2, again)
	}
	for _, threads := range []int{1, 3} {
		prev := parallel.SetThreads(threads)
		other, _ := SlicedWasserstein(x, y, 2, 2, 4000, 9)
		parallel.SetThreads(prev)
		if other != sw2 {
			t.Errorf("%d threads gave %v, the default %v", threads, other, sw2)
		}
	}
	if _, err := SlicedWasserstein(x, y[:3], 2, 2, 10, 0); err == nil {
		t.Error("ragged set accepted")
	}
}

// Between independent samples of N(0, I) and N(s, I) in 3-D the population
// distance is |s|/√3 along the spread of directions.
func TestSlicedWassersteinGaussians(t *testing.T) {
	rng := tensor.NewRNG(2)
	x := gaussian(rng, 4000, []float64{0, 0, 0}, 1)
	y := gaussian(rng, 3000, []float64{2, 0, 0}, 1)
	sw2, err := SlicedWasserstein(x, y, 3, 2, 500, 3)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "SW2", sw2, 2/math.Sqrt(3), 0.04)
}

// E k(X, Y) for X ~ N(μ₁, s₁² I), Y ~ N(μ₂, s₂² I) and the RBF kernel of
// width σ is (σ²/(σ²+v))^{d/2} exp(−|μ₁−μ₂|²/(2(σ²+v))), v = s₁² + s₂².
func expectedKernel(sigma, v, dist2 float64, d int) float64 {
	s2 := sigma * sigma
	return math.Pow(s2/(s2+v), float64(d)/2) * math.Exp(-dist2/(2*(s2+v)))
}

func mmdClosedForm(sigma, s1, s2, dist2 float64, d int) float64 {
	return expectedKernel(sigma, 2*s1*s1, 0, d) + expectedKernel(sigma, 2*s2*s2, 0, d) -
		2*expectedKernel(sigma, s1*s1+s2*s2, dist2, d)
}

func TestMMDClosedForm(t *testing.T) {
	rng := tensor.NewRNG(4)
	x := gaussian(rng, 1500, []float64{0, 0}, 1)
	y := gaussian(rng, 1200, []float64{1, 0.5}, 0.7)
	got, err := MMDWithBandwidth(x, y, 2, 1.3)
	if err != nil {
		t.Fatal(err)
	}
	want := mmdClosedForm(1.3, 1, 0.7, 1.25, 2)
	near(t, "MMD²", got, want, 0.08*want)

	// Same distribution: the estimate is within sampling noise of 0.
	z := gaussian(rng, 1500, []float64{0, 0}, 1)
	same, _ := MMD(x, z, 2)
	near(t, "MMD² same", same, 0, 3e-3)
}

// The unbiased estimator's mean over many small samples matches the closed
// form; the biased (V-statistic) one would sit about (2/n)(1 − E k(X, X'))
// ≈ 0.1 higher here.
func TestMMDUnbiased(t *testing.T) {
	rng := tensor.NewRNG(5)
	const reps, n = 3000, 10
	sum := 0.0
	for range reps {
		x := gaussian(rng, n, []float64{0}, 1)
		y := gaussian(rng, n, []float64{0.5}, 1)
		v, err := MMDWithBandwidth(x, y, 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		sum += v
	}
	near(t, "mean MMD²", sum/reps, mmdClosedForm(1, 1, 1, 0.25, 1), 0.01)
}

// For X − X' ~ N(0, 2I) in 2-D, |X − X'|²/2 is χ²₂, whose median is 2 ln 2.
func TestMedianBandwidth(t *testing.T) {
	rng := tensor.NewRNG(6)
	x := gaussian(rng, 2000, []float64{0, 0}, 1)
	y := gaussian(rng, 700, []float64{0, 0}, 1)
	h, err := MedianBandwidth(x, y, 2)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "median distance", h, math.Sqrt(4*math.Ln2), 0.03)
	one, _ := MedianBandwidth([]float32{2, 2}, []float32{2}, 1)
	near(t, "degenerate", one, 1, 0)
}

// E|Z| for Z ~ N(m, v): m·erf(m/√(2v)) + √(2v/π)·exp(−m²/(2v)).
func meanAbs(m, v float64) float64 {
	return m*math.Erf(m/math.Sqrt(2*v)) + math.Sqrt(2*v/math.Pi)*math.Exp(-m*m/(2*v))
}

func TestEnergyDistanceClosedForm(t *testing.T) {
	const mu1, s1, mu2, s2 = 0.0, 1.0, 0.8, 0.5
	want := 2*meanAbs(mu2-mu1, s1*s1+s2*s2) - meanAbs(0, 2*s1*s1) - meanAbs(0, 2*s2*s2)
	rng := tensor.NewRNG(7)
	x := gaussian(rng, 2000, []float64{mu1}, s1)
	y := gaussian(rng, 1500, []float64{mu2}, s2)
	got, err := EnergyDistance(x, y, 1)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "energy distance", got, want, 0.1) // sd over seeds ≈ 0.027

	// Unbiased: the mean over small samples matches the closed form.
	sum := 0.0
	const reps = 3000
	for range reps {
		v, _ := EnergyDistance(gaussian(rng, 5, []float64{mu1}, s1), gaussian(rng, 5, []float64{mu2}, s2), 1)
		sum += v
	}
	near(t, "mean energy distance", sum/reps, want, 0.03)

	z := gaussian(rng, 2000, []float64{mu1}, s1)
	same, _ := EnergyDistance(x, z, 1)
	near(t, "same distribution", same, 0, 0.01)
	if _, err := EnergyDistance(x[:1], z, 1); err == nil {
		t.Error("one-point set accepted")
	}
}

var stdNormal = data.Mixture{Weights: []float64{1}, Means: []float64{0}, Stds: []float64{1}, Dim: 1}

// For points all at a, W1 to N(0, 1) is E|X − a|.
func TestW1PointMass(t *testing.T) {
	for _, a := range []float64{0, 0.7, -2.5} {
		pts := []float32{float32(a), float32(a), float32(a)}
		got, err := W1Mixture(pts, stdNormal)
		if err != nil {
			t.Fatal(err)
		}
		want := meanAbs(float64(float32(a)), 1)
		near(t, "W1 exact", got, want, 1e-12)
		num, _ := W1CDF(pts, stdNormal.CDF, -12, 12)
		near(t, "W1 quadrature", num, want, 1e-9)
	}
}

// E W1(F_n, F) ≈ √(2/(πn)) ∫ √(F(1−F)) dx for large n: it shrinks like
// n^{-1/2}.
func TestW1Rate(t *testing.T) {
	integral := 0.0
	for x := -10.0; x < 10; x += 1e-4 {
		f := stdNormal.CDF(x + 5e-5)
		integral += 1e-4 * math.Sqrt(f*(1-f))
	}
	rng := tensor.NewRNG(8)
	for _, n := range []int{400, 6400} {
		const reps = 40
		mean := 0.0
		for range reps {
			w, _ := W1Mixture(gaussian(rng, n, []float64{0}, 1), stdNormal)
			mean += w / reps
		}
		want := math.Sqrt(2/(math.Pi*float64(n))) * integral
		near(t, "mean W1 n="+strconv.Itoa(n), mean, want, 0.08*want)
	}
}

// Against the paper's mixture: the quadrature agrees with the closed form,
// and moving the samples by δ moves W1 to within W1(F_n, F) of δ (triangle
// inequality, since the shift is at distance δ).
func TestW1PaperMixture(t *testing.T) {
	m := data.PaperMixture()
	pts := data.Draw(m, tensor.NewRNG(9), 5000)
	exact, err := W1Mixture(pts, m)
	if err != nil {
		t.Fatal(err)
	}
	num, _ := W1CDF(pts, m.CDF, -1.5, 1.5)
	near(t, "quadrature vs closed form", num, exact, 1e-6)
	if !(exact <= 0.02) {
		t.Errorf("W1 of the mixture's own samples = %g", exact)
	}
	const delta = 0.1
	moved, _ := W1Mixture(shift(pts, []float64{delta}), m)
	if !(moved >= delta-exact-1e-6) || !(moved <= delta+exact+1e-6) {
		t.Errorf("W1 after shift %g = %g, want within %g of %g", delta, moved, exact, delta)
	}
	if _, err := W1Mixture([]float32{float32(math.NaN())}, m); err == nil {
		t.Error("NaN sample accepted")
	}
}

func TestModeWeights(t *testing.T) {
	m := data.PaperMixture()
	pts := []float32{-0.6575, -0.66, 0.2474, 0.8002, 0.81, 0.79, 5, -5}
	w, err := ModeWeights(pts, m)
	if err != nil {
		t.Fatal(err)
	}
	// Far out the widest component (the middle one, σ = 0.02) has the
	// highest posterior on both sides: −5 and 5 go to it.
	want := []float64{2.0 / 8, 3.0 / 8, 3.0 / 8}
	for k := range want {
		near(t, "weight", w[k], want[k], 1e-15)
	}
	// Midway between the two narrow outer components the wider middle one
	// (σ = 0.02) wins.
	mid := float32((-0.6575 + 0.2474) / 2)
	w, _ = ModeWeights([]float32{mid}, data.Mixture{Weights: []float64{0.5, 0.5}, Means: []float64{-0.6575, 0.2474}, Stds: []float64{0.01, 0.02}, Dim: 1})
	if w[1] != 1 {
		t.Errorf("midpoint assigned %v", w)
	}
	const n = 20000
	w, _ = ModeWeights(data.Draw(m, tensor.NewRNG(10), n), m)
	for k, wk := range m.Weights {
		near(t, "sampled weight", w[k], wk, 4*math.Sqrt(wk*(1-wk)/n))
	}
	if _, err := ModeWeights([]float32{float32(math.Inf(1))}, m); err == nil {
		t.Error("Inf sample accepted")
	}
}
