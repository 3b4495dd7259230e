package tensor_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"holdgo/internal/isa"
	"holdgo/tensor"
)

// TestGroupNormLargeMean: group norm of inputs whose mean (1000.3) is large against their spread (1), where
// float32(μ) alone is 1.2·10⁻⁵ off, against the float64 formula (x − μ)/√(var + ε)·γ + β on the same
// float32 inputs: within 2·10⁻⁶ (a few float32 ulps of the outputs, which are O(1)) at every ISA level.
func TestGroupNormLargeMean(t *testing.T) {
	const n, c, h, groups, eps = 2, 4, 9, 2, 1e-5
	rng := rand.New(rand.NewPCG(41, 42))
	xs := make([]float32, n*c*h*h)
	for i := range xs {
		xs[i] = float32(1000.3 + rng.NormFloat64())
	}
	gs, bs := make([]float32, c), make([]float32, c)
	for i := range gs {
		gs[i], bs[i] = float32(0.5+rng.Float64()), float32(rng.NormFloat64())
	}
	size := c / groups * h * h
	want := make([]float64, len(xs))
	for g := 0; g < n*groups; g++ {
		seg := xs[g*size : (g+1)*size]
		var m, v float64
		for _, x := range seg {
			m += float64(x)
		}
		m /= float64(size)
		for _, x := range seg {
			v += (float64(x) - m) * (float64(x) - m)
		}
		r := 1 / math.Sqrt(v/float64(size)+eps)
		for i, x := range seg {
			ch := (g%groups)*(c/groups) + i/(h*h)
			want[g*size+i] = (float64(x)-m)*r*float64(gs[ch]) + float64(bs[ch])
		}
	}
	for _, level := range isa.Levels() {
		prev, _ := isa.Set(level)
		x := tensor.FromSlice(xs, n, c, h, h)
		out := tensor.GroupNorm(nil, x, tensor.FromSlice(gs, c), tensor.FromSlice(bs, c), groups, eps)
		for i, v := range out.Data() {
			if d := math.Abs(float64(v) - want[i]); !(d <= 2e-6) {
				t.Fatalf("%s: element %d = %v, want %v (error %g)", level, i, v, want[i], d)
			}
		}
		isa.Set(prev)
	}
}
