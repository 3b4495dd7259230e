package vec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSin compares Sin with math.Sin in float64 (independent reference) on
// awkward lengths, offsets, aliasing, quadrant boundaries and specials, on
// every instruction-set level.
func TestSin(t *testing.T) { forEachLevel(t, testSin) }

func testSin(t *testing.T) {
	var xs []float64
	for k := -40; k <= 40; k++ {
		b := float64(k) * math.Pi / 4
		for _, d := range []float64{-1e-6, -1e-7, 0, 1e-7, 1e-6} {
			xs = append(xs, b+d)
		}
	}
	for i := 0; i < 2000; i++ {
		xs = append(xs, float64(i-1000)*0.01371, float64(i-1000)*1.7e2, float64(i)*261.7)
	}
	xs = append(xs, 0, math.Copysign(0, -1), 1e-30, -1e-30, 1<<19-1, 1<<19, -(1 << 19), 1e7, -3e30,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat32)
	check := func(name string, in, out []float32) {
		t.Helper()
		for i, v := range in {
			want := math.Sin(float64(v))
			got := float64(out[i])
			if math.IsNaN(want) {
				if !math.IsNaN(got) {
					t.Fatalf("%s: sin(%g) = %g, want NaN", name, v, got)
				}
				continue
			}
			if !(math.Abs(got-want) <= 6e-8) || (v == 0 && math.Signbit(got) != math.Signbit(float64(v))) {
				t.Fatalf("%s: sin(%g) = %g, want %g", name, v, got, want)
			}
		}
	}
	all := make([]float32, len(xs))
	for i, v := range xs {
		all[i] = float32(v)
	}
	for _, n := range []int{0, 1, 3, 4, 5, 7, 8, 9, 17, 1000, 1001} {
		for off := 0; off < 3 && off+n <= len(all); off++ {
			in := all[off : off+n]
			out := make([]float32, n)
			Sin(out, in)
			check("copy", in, out)
			alias := append([]float32(nil), in...)
			Sin(alias, alias)
			check("alias", in, alias)
		}
	}
	out := make([]float32, len(all))
	Sin(out, all)
	check("all", all, out)
}

// TestSinLevelsBitIdentical: the SIMD kernels give sinRef's bits on every element (arguments of
// every magnitude up to and past 2¹⁹, signed zeros, NaN and infinities among them at every lane
// position), so a checkpoint trained with Fourier features does not depend on the level.
func TestSinLevelsBitIdentical(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	x := make([]float32, 4099)
	for i := range x {
		x[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(9))-3))
	}
	specials := []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
		1 << 19, -(1 << 19), 1<<19 - 0.0625, math.MaxFloat32, 1e-40, math.Pi / 4, -math.Pi / 2, 3 * math.Pi / 4}
	for i, v := range specials {
		x[17*i+3] = v
	}
	want := make([]float32, len(x))
	sinRef(want, x)
	forEachLevel(t, func(t *testing.T) {
		for _, n := range []int{len(x), 8, 15, 16, 31} {
			got := make([]float32, n)
			Sin(got, x[:n])
			alias := append([]float32(nil), x[:n]...)
			Sin(alias, alias)
			for i := range n {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(alias[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d: sin(%g) = %g (in place %g), sinRef %g", n, x[i], got[i], alias[i], want[i])
				}
			}
		}
	})
}
