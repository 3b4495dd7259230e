package tensor

import (
	"math"
	"testing"
)

// TestSinSlice checks the CPU sine against math.Sin in float64 over the
// ranges Fourier features reach and beyond, at quadrant boundaries and for
// special values: within one float32 rounding (|error| ≤ 6·10⁻⁸).
func TestSinSlice(t *testing.T) {
	var in []float32
	r := NewRNG(5)
	for _, scale := range []float64{1, 10, 300, 1e4, 4e5, 1e9} {
		for range 20000 {
			in = append(in, float32(r.Normal()*scale))
		}
	}
	for k := -2000; k <= 2000; k++ { // around multiples of π/4
		c := float64(k) * math.Pi / 4
		in = append(in, float32(c), math.Nextafter32(float32(c), 1e30), math.Nextafter32(float32(c), -1e30))
	}
	in = append(in, 0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.MaxFloat32, math.SmallestNonzeroFloat32)
	out := make([]float32, len(in))
	sinSlice(out, in)
	for i, v := range in {
		want := math.Sin(float64(v))
		got := float64(out[i])
		if math.IsNaN(want) {
			if !math.IsNaN(got) {
				t.Errorf("sin(%v) = %v, want NaN", v, got)
			}
			continue
		}
		if e := math.Abs(got - want); !(e <= 6e-8) || math.Signbit(got) != math.Signbit(want) && want != 0 {
			t.Errorf("sin(%v) = %v, want %v (error %.2g)", v, got, want, e)
		}
	}
}

func BenchmarkSin(b *testing.B) {
	in := make([]float32, 1<<16)
	r := NewRNG(1)
	for i := range in {
		in[i] = float32(r.Normal() * 60)
	}
	out := make([]float32, len(in))
	b.Run("sinSlice", func(b *testing.B) {
		for b.Loop() {
			sinSlice(out, in)
		}
	})
	b.Run("math.Sin", func(b *testing.B) {
		for b.Loop() {
			for i, v := range in {
				out[i] = float32(math.Sin(float64(v)))
			}
		}
	})
}
