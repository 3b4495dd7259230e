package vec

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"holdgo/internal/isa"
)

// forEachLevel runs f once per instruction-set level the machine supports.
func forEachLevel(t *testing.T, f func(t *testing.T)) {
	for _, level := range isa.Levels() {
		prev, err := isa.Set(level)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(level, f)
		isa.Set(prev)
	}
}

// ulps is the distance between a and b in float32 steps (±0 equal; NaN is
// 0 from NaN and infinitely far from anything else).
func ulps(a, b float32) float64 {
	if a != a || b != b {
		if a != a && b != b {
			return 0
		}
		return math.Inf(1)
	}
	return math.Abs(float64(ordered(a) - ordered(b)))
}

func ordered(f float32) int64 {
	b := int64(math.Float32bits(f))
	if b&(1<<31) != 0 {
		return -(b & 0x7fffffff)
	}
	return b
}

// specials are the inputs every transcendental kernel must get right.
var specials = []float32{
	float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)),
	math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
	1e-38, -1e-38, 1e-30, -1e-30, 1e-8, -1e-8, 1e-4, -1e-4, 0.3, -0.3, 0.625, -0.625, 0.6249999, 1, -1,
	9, -9, 9.1, -9.1, 20, -20, 50, -50, 87, -87, 87.3, -87.3, 88, -88, 88.72283, 88.72284, 89, -89,
	-100, -103.9, -103.97, -104, -104.5, -108, -108.7, -110, -115, -116, -150, 200, -200, 1e30, -1e30,
	gradX0Hi, math.Nextafter32(gradX0Hi, 0), math.Nextafter32(gradX0Hi, -2), -1.2, -1.3, -0.7785, -1.7785,
}

// inputs returns n values: the specials, then a mix of wide and narrow
// random ones.
func inputs(rng *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		switch {
		case i < len(specials) && n > 50:
			x[i] = specials[(i*7)%len(specials)]
		case i%3 == 0:
			x[i] = float32(rng.NormFloat64() * 3)
		default:
			x[i] = float32((rng.Float64()*2 - 1) * 120)
		}
	}
	return x
}

type unary struct {
	name string
	fn   func(dst, x []float32)
	ref  func(dst, x []float32)
	ulps float64 // tolerance against the float64 reference
}

var unaries = []unary{
	{"Exp", Exp, expRef, 2},
	{"Sigmoid", Sigmoid, sigmoidRef, 3},
	{"SiLU", SiLU, siluRef, 4},
	{"Tanh", Tanh, tanhRef, 3},
	{"SiLUGrad", func(dst, x []float32) { SiLUGrad(dst, x, gradDy(len(x))) },
		func(dst, x []float32) { siluGradRef(dst, x, gradDy(len(x))) }, 8},
}

// gradDy is the dy the unary tests pass to SiLUGrad: ±1.5 and a few specials.
func gradDy(n int) []float32 {
	dy := make([]float32, n)
	for i := range dy {
		dy[i] = []float32{1.5, -1, 1e-30, 3e20, float32(math.NaN()), 0.25, -7}[i%7]
	}
	return dy
}

// padded returns n elements at offset off inside a guarded buffer, and a
// check that nothing outside them changed.
func padded(x []float32, off int) ([]float32, func(t *testing.T, what string)) {
	const guard = 37
	buf := make([]float32, off+len(x)+guard)
	for i := range buf {
		buf[i] = float32(-777.25)
	}
	s := buf[off : off+len(x) : off+len(x)]
	copy(s, x)
	return s, func(t *testing.T, what string) {
		t.Helper()
		for i, v := range buf {
			if (i < off || i >= off+len(x)) && v != -777.25 {
				t.Fatalf("%s: wrote outside dst at %d", what, i-off)
			}
		}
	}
}

// TestUnary compares each transcendental kernel with its float64 reference,
// every size 0…300 at offsets 0, 1, 3, and in place.
func TestUnary(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, u := range unaries {
			for n := 0; n <= 300; n++ {
				x := inputs(rng, n)
				want := make([]float32, n)
				u.ref(want, x)
				for _, off := range []int{0, 1, 3} {
					dst, check := padded(make([]float32, n), off)
					xs, _ := padded(x, 3-off)
					u.fn(dst, xs)
					check(t, u.name)
					compareULP(t, u.name, x, dst, want, u.ulps)
				}
				inPlace := append([]float32(nil), x...)
				u.fn(inPlace, inPlace)
				compareULP(t, u.name+" in place", x, inPlace, want, u.ulps)
			}
		}
	})
}

func compareULP(t *testing.T, name string, x, got, want []float32, tol float64) {
	t.Helper()
	for i := range want {
		if d := ulps(got[i], want[i]); !(d <= tol) {
			t.Fatalf("%s n=%d: x[%d]=%g: got %g, want %g (%g ulp)", name, len(x), i, x[i], got[i], want[i], d)
		}
	}
}

// TestSpecials checks NaN, ±Inf, ±0, overflow and underflow through every
// transcendental kernel, and SiLUGrad with special dy.
func TestSpecials(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		for _, u := range unaries {
			got, want := make([]float32, len(specials)), make([]float32, len(specials))
			u.fn(got, specials)
			u.ref(want, specials)
			for i, x := range specials {
				if d := ulps(got[i], want[i]); d > u.ulps || (got[i] == got[i] && math.Signbit(float64(got[i])) != math.Signbit(float64(want[i]))) {
					t.Errorf("%s(%g) = %g, want %g", u.name, x, got[i], want[i])
				}
			}
		}
		x := []float32{0, 2, -2, float32(math.Inf(1)), float32(math.Inf(-1)), 50, -50}
		for _, dy := range []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 0} {
			dys := make([]float32, len(x))
			for i := range dys {
				dys[i] = dy
			}
			got, want := make([]float32, len(x)), make([]float32, len(x))
			SiLUGrad(got, x, dys)
			siluGradRef(want, x, dys)
			for i := range x {
				if math.IsInf(float64(x[i]), -1) && math.IsInf(float64(dy), 0) {
					continue // Inf·silu'(-Inf): the kernels give ±Inf, float64 math NaN (documented)
				}
				if d := ulps(got[i], want[i]); d > 8 {
					t.Errorf("SiLUGrad(x=%g, dy=%g) = %g, want %g", x[i], dy, got[i], want[i])
				}
			}
		}
	})
}

// TestAccuracy sweeps each transcendental kernel over 2^20 inputs (every
// 2^12th float32 from -120 to 120 and dense steps near the places where
// the approximations switch) and logs the largest error in ulp.
func TestAccuracy(t *testing.T) {
	var x []float32
	for b := uint32(0); b < 0x42f00000; b += 1 << 12 { // |x| < 120
		x = append(x, math.Float32frombits(b), math.Float32frombits(b|1<<31))
	}
	for _, c := range []float32{gradX0Hi, gradX0Hi - gradWin, gradX0Hi + gradWin, tanhSmall, -tanhSmall, -87.33655, 88.72283, -103.97} {
		v := c
		for range 2000 {
			x = append(x, v, math.Nextafter32(c, float32(math.Inf(1))))
			v = math.Nextafter32(v, float32(math.Inf(-1)))
			c = math.Nextafter32(c, float32(math.Inf(1)))
		}
	}
	forEachLevel(t, func(t *testing.T) {
		for _, u := range unaries {
			got, want := make([]float32, len(x)), make([]float32, len(x))
			u.fn(got, x)
			u.ref(want, x)
			worst, at := 0.0, 0
			for i := range x {
				if d := ulps(got[i], want[i]); d > worst {
					worst, at = d, i
				}
			}
			t.Logf("%-8s max %g ulp at x=%g (%d inputs)", u.name, worst, x[at], len(x))
			if worst > u.ulps {
				t.Errorf("%s: %g ulp at x=%g: got %g, want %g", u.name, worst, x[at], got[at], want[at])
			}
		}
	})
}

// arith is an exact kernel run on three slices (the ones it doesn't use
// are ignored), next to its reference.
type arith struct {
	name string
	fn   func(dst, a, b []float32)
	ref  func(dst, a, b []float32)
}

const sc = float32(-0.37)

var ariths = []arith{
	{"Add", Add, addRef},
	{"Sub", Sub, subRef},
	{"Mul", Mul, mulRef},
	{"Scale", func(d, a, _ []float32) { Scale(d, a, sc) }, func(d, a, _ []float32) { scaleRef(d, a, sc) }},
	{"AddScalar", func(d, a, _ []float32) { AddScalar(d, a, sc) }, func(d, a, _ []float32) { addScalarRef(d, a, sc) }},
	{"AddScaled", func(d, a, b []float32) { AddScaled(d, a, b, sc) }, func(d, a, b []float32) { addScaledRef(d, a, b, sc) }},
	{"Acc", func(d, a, _ []float32) { copy(d, a); Acc(d, a) }, func(d, a, _ []float32) { addRef(d, a, a) }},
	{"Axpy", func(d, a, b []float32) { copy(d, a); Axpy(d, b, sc) }, func(d, a, b []float32) { addScaledRef(d, a, b, sc) }},
	{"EMA", func(d, a, b []float32) { copy(d, a); EMA(d, b, 0.001) }, func(d, a, b []float32) { copy(d, a); emaRef(d, b, 0.001) }},
	{"Affine64", func(d, a, _ []float32) { Affine64(d, a, -0.37000000001, 0.2000000003) }, func(d, a, _ []float32) { affine64Ref(d, a, -0.37000000001, 0.2000000003) }},
}

// TestArith: the exact kernels are bit-identical to their references at
// every size 0…300 and offsets 0, 1, 3, and with dst == a, dst == a == b.
func TestArith(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, k := range ariths {
			for n := 0; n <= 300; n++ {
				a, b := inputs(rng, n), inputs(rng, n)
				want := make([]float32, n)
				k.ref(want, a, b)
				for _, off := range []int{0, 1, 3} {
					dst, check := padded(make([]float32, n), off)
					as, _ := padded(a, (off+1)%4)
					bs, _ := padded(b, (off+2)%4)
					k.fn(dst, as, bs)
					check(t, k.name)
					compareBits(t, k.name, dst, want)
				}
				if k.name == "Acc" || k.name == "Axpy" || k.name == "EMA" {
					continue // already in place
				}
				d := append([]float32(nil), a...)
				k.fn(d, d, b)
				compareBits(t, k.name+" dst==a", d, want)
				d = append([]float32(nil), a...)
				k.fn(d, d, d)
				want2 := make([]float32, n)
				k.ref(want2, a, a)
				compareBits(t, k.name+" dst==a==b", d, want2)
			}
		}
	})
}

func compareBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
			t.Fatalf("%s n=%d: [%d] = %g, want %g", name, len(want), i, got[i], want[i])
		}
	}
}

// TestAdam: bit-identical to the reference loop, every size 0…300, offsets,
// over several steps.
func TestAdam(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(5, 6))
		for n := 0; n <= 300; n++ {
			p, g := inputs(rng, n), inputs(rng, n)
			m, v := make([]float32, n), make([]float32, n)
			wp, wm, wv := append([]float32(nil), p...), make([]float32, n), make([]float32, n)
			off := n % 4
			ps, check := padded(p, off)
			gs, _ := padded(g, 3-off)
			ms, _ := padded(m, off)
			vs, _ := padded(v, (off+2)%4)
			for step := 1; step <= 3; step++ {
				b1, b2 := float32(0.9), float32(0.999)
				bc1 := 1 - math.Pow(0.9, float64(step))
				bc2 := 1 - math.Pow(0.999, float64(step))
				stepSize, sqrtBC2, eps := float32(1e-3/bc1), float32(math.Sqrt(bc2)), float32(1e-8)
				Adam(ps, gs, ms, vs, b1, b2, stepSize, sqrtBC2, eps)
				adamRef(wp, g, wm, wv, b1, 1-b1, b2, 1-b2, stepSize, sqrtBC2, eps)
			}
			check(t, "Adam")
			compareBits(t, "Adam params", ps, wp)
			compareBits(t, "Adam m", ms, wm)
			compareBits(t, "Adam v", vs, wv)
		}
	})
}

// sumBound is Sum's documented error bound beyond the final rounding.
func sumBound(x []float32, sq bool) float64 {
	var abs float64
	for _, v := range x {
		if sq {
			abs += float64(v) * float64(v)
		} else {
			abs += math.Abs(float64(v))
		}
	}
	return float64(len(x)+4) * 0x1p-53 * abs * 2 // the reference's own error too
}

// TestSum: Sum and SumSquares within their error bounds of the float64
// reference, sizes 0…300 at offsets and a few large ones.
func TestSum(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		sizes := reductionSizes()
		for _, n := range sizes {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64()) * float32(math.Exp(rng.NormFloat64()*4))
			}
			xs, _ := padded(x, n%4)
			want := sumRef(x)
			got := Sum(xs)
			if err := math.Abs(float64(got) - want); !(err <= sumBound(x, false)+0.5*ulpOf(float32(want))) {
				t.Fatalf("Sum n=%d: got %g, want %g", n, got, want)
			}
			wantSq := sumSquaresRef(x)
			if gotSq := SumSquares(xs); !(math.Abs(gotSq-wantSq) <= sumBound(x, true)) {
				t.Fatalf("SumSquares n=%d: got %g, want %g", n, gotSq, wantSq)
			}
		}
	})
}

func ulpOf(f float32) float64 {
	f = float32(math.Abs(float64(f)))
	return float64(math.Nextafter32(f, float32(math.Inf(1))) - f)
}

func TestPanics(t *testing.T) {
	a := make([]float32, 4)
	for name, f := range map[string]func(){
		"Exp":  func() { Exp(a, a[:3]) },
		"Add":  func() { Add(a, a, a[:1]) },
		"Adam": func() { Adam(a, a, a, a[:2], 0.9, 0.999, 1, 1, 1) },
	} {
		func() {
			defer func() {
				if msg := fmt.Sprint(recover()); msg == "<nil>" {
					t.Errorf("%s with short slices did not panic", name)
				}
			}()
			f()
		}()
	}
}

// TestSumSqDev: SumSqDev and Sum64 within Sum's error bound of the ordered
// float64 loops, sizes 0…300 at offsets and a few large ones, with a mean
// far from zero (the case group norm's two-pass variance is for).
func TestSumSqDev(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(9, 10))
		sizes := reductionSizes()
		for _, n := range sizes {
			x := make([]float32, n)
			for i := range x {
				x[i] = 100 + float32(rng.NormFloat64())
			}
			xs, _ := padded(x, n%4)
			if got, want := Sum64(xs), sumRef(x); !(math.Abs(got-want) <= sumBound(x, false)) {
				t.Fatalf("Sum64 n=%d: got %g, want %g", n, got, want)
			}
			m := sumRef(x) / float64(max(n, 1))
			dev := make([]float32, n)
			for i, v := range x {
				dev[i] = float32(float64(v) - m) // only for the bound's scale
			}
			want := sumSqDevRef(x, m)
			if got := SumSqDev(xs, m); !(math.Abs(got-want) <= 2*sumBound(dev, true)) {
				t.Fatalf("SumSqDev n=%d: got %g, want %g", n, got, want)
			}
		}
	})
}

// TestMix: Mix and Mix64 bit-identical to the FMA-chain reference on every
// level, for every shape (1…4 rows, 1…8 inputs), lengths 0…300 (every
// tail), unaligned offsets, and in place (out rows being in rows).
func TestMix(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(11, 12))
		for rows := 1; rows <= MaxMixRows; rows++ {
			for inputs := 1; inputs <= MaxMixInputs; inputs++ {
				for n := 0; n <= 300; n += 1 + n/40 {
					coef := make([]float64, rows*inputs)
					for i := range coef {
						coef[i] = rng.NormFloat64()
					}
					in32, in64 := make([][]float32, inputs), make([][]float64, inputs)
					for j := range in32 {
						x := make([]float32, n)
						for i := range x {
							x[i] = float32(rng.NormFloat64())
						}
						in32[j], _ = padded(x, (j+n)%4)
						in64[j] = make([]float64, n)
						for i, v := range x {
							in64[j][i] = float64(v) + rng.NormFloat64()*1e-9
						}
					}
					want32, got32 := make([][]float32, rows), make([][]float32, rows)
					want64, got64 := make([][]float64, rows), make([][]float64, rows)
					for r := range rows {
						want32[r], got32[r] = make([]float32, n), make([]float32, n+1)[1:]
						want64[r], got64[r] = make([]float64, n), make([]float64, n)
					}
					mixRef(want32, coef, in32, 0)
					mixRef(want64, coef, in64, 0)
					Mix(got32, coef, in32)
					Mix64(got64, coef, in64)
					for r := range rows {
						compareBits(t, fmt.Sprintf("Mix %d×%d n=%d row %d", rows, inputs, n, r), got32[r], want32[r])
						for i := range n {
							if math.Float64bits(got64[r][i]) != math.Float64bits(want64[r][i]) {
								t.Fatalf("Mix64 %d×%d n=%d: [%d][%d] = %v, want %v", rows, inputs, n, r, i, got64[r][i], want64[r][i])
							}
						}
					}
					// In place: the first min(rows, inputs) outputs overwrite the inputs.
					if rows <= inputs {
						io32 := make([][]float32, inputs)
						io64 := make([][]float64, inputs)
						for j := range inputs {
							io32[j] = append([]float32(nil), in32[j]...)
							io64[j] = append([]float64(nil), in64[j]...)
						}
						Mix(io32[:rows], coef, io32)
						Mix64(io64[:rows], coef, io64)
						for r := range rows {
							compareBits(t, fmt.Sprintf("Mix in place %d×%d n=%d row %d", rows, inputs, n, r), io32[r], want32[r])
							for i := range n {
								if io64[r][i] != want64[r][i] {
									t.Fatalf("Mix64 in place %d×%d n=%d: [%d][%d] = %v, want %v", rows, inputs, n, r, i, io64[r][i], want64[r][i])
								}
							}
						}
					}
				}
			}
		}
	})
}

// reductionSizes are the lengths the reductions are tested on: 0…300 (every
// tail of every unrolling) and a few large ones.
func reductionSizes() []int {
	sizes := []int{1000, 4097, 100003}
	for n := 0; n <= 300; n++ {
		sizes = append(sizes, n)
	}
	return sizes
}
