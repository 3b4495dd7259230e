package data

import (
	"math"
	"reflect"
	"slices"
	"sort"
	"testing"

	"holdgo/tensor"
)

func TestPaperMixtureNumbers(t *testing.T) {
	m := PaperMixture()
	if !slices.Equal(m.Weights, []float64{0.34, 0.33, 0.33}) ||
		!slices.Equal(m.Means, []float64{-0.6575, 0.2474, 0.8002}) ||
		!slices.Equal(m.Stds, []float64{0.01, 0.02, 0.01}) || m.Dim != 1 {
		t.Errorf("paper mixture %+v", m)
	}
	if m.Name() != NameGMM1D || m.Dimension() != 1 {
		t.Errorf("name %q dim %d", m.Name(), m.Dimension())
	}
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestMixtureValidate(t *testing.T) {
	bad := []Mixture{
		{},
		{Weights: []float64{1}, Means: []float64{0}, Stds: []float64{0}, Dim: 1},
		{Weights: []float64{1}, Means: []float64{0, 1}, Stds: []float64{1}, Dim: 1},
		{Weights: []float64{-1, 2}, Means: []float64{0, 1}, Stds: []float64{1, 1}, Dim: 1},
		{Weights: []float64{1}, Means: []float64{0}, Stds: []float64{1}, Dim: 0},
		{Weights: []float64{0}, Means: []float64{0}, Stds: []float64{1}, Dim: 1},
		{Weights: []float64{math.NaN()}, Means: []float64{0}, Stds: []float64{1}, Dim: 1},
	}
	for _, m := range bad {
		if m.Validate() == nil {
			t.Errorf("%+v accepted", m)
		}
	}
}

// Values of Φ and of the standard normal partial expectation from tables.
func TestMixtureClosedForms(t *testing.T) {
	std := Mixture{Weights: []float64{1}, Means: []float64{0}, Stds: []float64{1}, Dim: 1}
	shifted := Mixture{Weights: []float64{2}, Means: []float64{3}, Stds: []float64{2}, Dim: 1}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"Φ(0)", std.CDF(0), 0.5},
		{"Φ(1)", std.CDF(1), 0.8413447460685429},
		{"Φ(-1.96)", std.CDF(-1.96), 0.024997895148220435},
		{"φ(0)", std.PDF(0), 0.3989422804014327},
		{"N(3,4) cdf at 5", shifted.CDF(5), 0.8413447460685429},
		{"N(3,4) pdf at 5", shifted.PDF(5), 0.24197072451914337 / 2},
		{"E(0-X)+", std.LowerPartial(0), 0.3989422804014327},
		// E[(1 − X)+] = Φ(1) + φ(1)
		{"E(1-X)+", std.LowerPartial(1), 0.8413447460685429 + 0.24197072451914337},
		{"log φ(40)", std.LogDensity([]float64{40}), -800 - 0.5*math.Log(2*math.Pi)},
	}
	for _, c := range checks {
		if !(math.Abs(c.got-c.want) <= 1e-12*max(1, math.Abs(c.want))) {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	// Far in a tail the log-sum-exp keeps the log-density finite.
	m := PaperMixture()
	if lp := m.LogDensity([]float64{50}); math.IsInf(lp, 0) || math.IsNaN(lp) {
		t.Errorf("log density at 50 = %v", lp)
	}
}

// The density integrates to one, the CDF is its integral and LowerPartial
// is the CDF's integral (trapezoid rule on a grid far finer than σ = 0.01).
func TestMixtureIntegrals(t *testing.T) {
	m := PaperMixture()
	lo, hi, steps := -1.5, 1.5, 300000
	h := (hi - lo) / float64(steps)
	area, cdfArea := 0.0, 0.0
	prevP, prevC := m.PDF(lo), m.CDF(lo)
	for i := 1; i <= steps; i++ {
		x := lo + float64(i)*h
		p, c := m.PDF(x), m.CDF(x)
		area += h * (p + prevP) / 2
		cdfArea += h * (c + prevC) / 2
		prevP, prevC = p, c
		if i%20000 == 0 {
			if !(math.Abs(area-c) <= 1e-8) {
				t.Fatalf("∫pdf to %g = %.10f, CDF %.10f", x, area, c)
			}
			if g := m.LowerPartial(x) - m.LowerPartial(lo); !(math.Abs(g-cdfArea) <= 1e-8) {
				t.Fatalf("∫cdf to %g = %.10f, LowerPartial difference %.10f", x, cdfArea, g)
			}
		}
	}
	if !(math.Abs(area-1) <= 1e-9) {
		t.Errorf("∫pdf = %.12f", area)
	}
	if d := m.Density([]float64{0.3}); !(math.Abs(d-m.PDF(0.3)) <= 1e-12*d) {
		t.Errorf("Density %g PDF %g", d, m.PDF(0.3))
	}
}

// In d dimensions an isotropic component is a product of 1-D normals, and
// the score is the gradient of the log-density.
func TestMixtureMultiDim(t *testing.T) {
	m := Mixture{
		Weights: []float64{0.2, 0.8},
		Means:   []float64{0, 0, 1, -1},
		Stds:    []float64{0.5, 1},
		Dim:     2,
	}
	x := []float64{0.3, -0.4}
	n := func(v, mu, s float64) float64 {
		z := (v - mu) / s
		return math.Exp(-z*z/2) / (s * math.Sqrt(2*math.Pi))
	}
	want := 0.2*n(0.3, 0, 0.5)*n(-0.4, 0, 0.5) + 0.8*n(0.3, 1, 1)*n(-0.4, -1, 1)
	if got := m.Density(x); !(math.Abs(got-want) <= 1e-12) {
		t.Errorf("density %g, want %g", got, want)
	}
	resp := make([]float64, 2)
	m.Responsibilities(x, resp)
	if r0 := 0.2 * n(0.3, 0, 0.5) * n(-0.4, 0, 0.5) / want; !(math.Abs(resp[0]-r0) <= 1e-12) || !(math.Abs(resp[0]+resp[1]-1) <= 1e-12) {
		t.Errorf("responsibilities %v, want %g first", resp, r0)
	}
	grad := make([]float64, 2)
	m.Score(x, grad)
	for i := range x {
		const h = 1e-6
		up, down := slices.Clone(x), slices.Clone(x)
		up[i] += h
		down[i] -= h
		fd := (m.LogDensity(up) - m.LogDensity(down)) / (2 * h)
		if !(math.Abs(fd-grad[i]) <= 1e-6) {
			t.Errorf("score[%d] = %g, finite difference %g", i, grad[i], fd)
		}
	}
	if mean := m.Mean(); !(math.Abs(mean[0]-0.8) <= 1e-15) || !(math.Abs(mean[1]+0.8) <= 1e-15) {
		t.Errorf("mean %v", mean)
	}
}

// Samples pass a Kolmogorov–Smirnov test against the exact CDF and hit the
// components in proportion to the weights; a seed fixes them.
func TestMixtureSample(t *testing.T) {
	m := PaperMixture()
	const n = 20000
	x := Draw(m, tensor.NewRNG(1), n)
	if y := Draw(m, tensor.NewRNG(1), n); !slices.Equal(x, y) {
		t.Fatal("same seed, different samples")
	}
	s := make([]float64, n)
	for i, v := range x {
		s[i] = float64(v)
	}
	sort.Float64s(s)
	ks := 0.0
	for i, v := range s {
		c := m.CDF(v)
		ks = max(ks, math.Abs(c-float64(i)/n), math.Abs(c-float64(i+1)/n))
	}
	if crit := 1.95 / math.Sqrt(n); !(ks <= crit) { // 0.1% level
		t.Errorf("KS statistic %.4f > %.4f", ks, crit)
	}
	counts := make([]int, 3)
	for _, v := range s {
		switch {
		case v < -0.2:
			counts[0]++
		case v < 0.5:
			counts[1]++
		default:
			counts[2]++
		}
	}
	for k, c := range counts {
		w := m.Weights[k]
		if sd := math.Sqrt(n * w * (1 - w)); !(math.Abs(float64(c)-n*w) <= 4*sd) {
			t.Errorf("component %d: %d of %d, want %.0f ± %.0f", k, c, n, n*w, sd)
		}
	}
}

func TestHoldConversionRoundTrip(t *testing.T) {
	m := Mixture{Weights: []float64{0.2, 0.8}, Means: []float64{1, 2, 3, 4}, Stds: []float64{0.1, 0.3}, Dim: 2}
	back := FromHold(m.Hold())
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip %+v, want %+v", back, m)
	}
	if h := m.Hold(); len(h.Means) != 2 || h.Means[1][0] != 3 {
		t.Fatalf("hold means %v", h.Means)
	}
}
