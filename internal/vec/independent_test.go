package vec

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// Independent references. ref.go's arithmetic loops are also the generic
// level's kernels, so under -tags noasm (generic only) TestArith, TestAdam,
// TestSum and TestMix would compare a function with itself. The tests here
// use neither ref.go nor generic.go: every float32 operation is done in
// float64 and rounded once (exact for a single +, −, ·, / or √ of float32
// operands: float64 has more than 2·24+2 bits), and every sum is compared
// with the exact value (math/big) within the documented error bound.

// r32 rounds a float64 to float32.
func r32(x float64) float32 { return float32(x) }

func f64(x float32) float64 { return float64(x) }

type indepArith struct {
	name string
	fn   func(dst, a, b []float32)
	want func(a, b float32) float32
}

var indepAriths = []indepArith{
	{"Add", Add, func(a, b float32) float32 { return r32(f64(a) + f64(b)) }},
	{"Sub", Sub, func(a, b float32) float32 { return r32(f64(a) - f64(b)) }},
	{"Mul", Mul, func(a, b float32) float32 { return r32(f64(a) * f64(b)) }},
	{"Scale", func(dst, a, _ []float32) { Scale(dst, a, 1.7) }, func(a, _ float32) float32 { return r32(f64(a) * f64(1.7)) }},
	{"AddScalar", func(dst, a, _ []float32) { AddScalar(dst, a, -0.3) }, func(a, _ float32) float32 { return r32(f64(a) + f64(-0.3)) }},
	{"AddScaled", func(dst, a, b []float32) { AddScaled(dst, a, b, 0.6) },
		func(a, b float32) float32 { return r32(f64(a) + f64(r32(f64(0.6)*f64(b)))) }},
	{"Acc", func(dst, a, b []float32) { copy(dst, a); Acc(dst, b) }, func(a, b float32) float32 { return r32(f64(a) + f64(b)) }},
	{"Axpy", func(dst, a, b []float32) { copy(dst, a); Axpy(dst, b, -2.5) },
		func(a, b float32) float32 { return r32(f64(a) + f64(r32(f64(-2.5)*f64(b)))) }},
	{"EMA", func(dst, a, b []float32) { copy(dst, a); EMA(dst, b, 0.001) }, // s − k·(s − θ)
		func(s, p float32) float32 { return r32(f64(s) - f64(r32(f64(0.001)*f64(r32(f64(s)-f64(p)))))) }},
}

// TestIndependentArith: the element-wise kernels equal float64 arithmetic
// rounded to float32 bit for bit, every length 0…100, specials included.
func TestIndependentArith(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, k := range indepAriths {
			for n := 0; n <= 100; n++ {
				a, b := inputs(rng, n), inputs(rng, n)
				want := make([]float32, n)
				for i := range want {
					want[i] = k.want(a[i], b[i])
				}
				got := make([]float32, n)
				k.fn(got, a, b)
				compareBits(t, "independent "+k.name, got, want)
			}
		}
	})
}

// TestIndependentAdam: three Adam steps against PyTorch's update written
// out in float64 with each operation rounded to float32.
func TestIndependentAdam(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(23, 24))
		for n := 0; n <= 70; n++ {
			p, g := inputs(rng, n), inputs(rng, n)
			m, v := make([]float32, n), make([]float32, n)
			wp, wm, wv := append([]float32(nil), p...), make([]float32, n), make([]float32, n)
			b1, b2 := float32(0.9), float32(0.999)
			c1, c2 := r32(1-f64(b1)), r32(1-f64(b2))
			for step := 1; step <= 3; step++ {
				bc1, bc2 := 1-math.Pow(0.9, float64(step)), 1-math.Pow(0.999, float64(step))
				stepSize, sqrtBC2, eps := r32(1e-3/bc1), r32(math.Sqrt(bc2)), float32(1e-8)
				Adam(p, g, m, v, b1, b2, stepSize, sqrtBC2, eps)
				for i := range wp {
					wm[i] = r32(f64(r32(f64(b1)*f64(wm[i]))) + f64(r32(f64(c1)*f64(g[i]))))
					wv[i] = r32(f64(r32(f64(b2)*f64(wv[i]))) + f64(r32(f64(r32(f64(c2)*f64(g[i])))*f64(g[i]))))
					denom := r32(f64(r32(f64(r32(math.Sqrt(f64(wv[i]))))/f64(sqrtBC2))) + f64(eps))
					wp[i] = r32(f64(wp[i]) - f64(r32(f64(r32(f64(stepSize)*f64(wm[i])))/f64(denom))))
				}
			}
			compareBits(t, "independent Adam params", p, wp)
			compareBits(t, "independent Adam m", m, wm)
			compareBits(t, "independent Adam v", v, wv)
		}
	})
}

// exactSum returns Σ f(x[i]) exactly (as big.Float) and Σ|f(x[i])| in float64.
func exactSum(x []float32, f func(float64) float64) (*big.Float, float64) {
	s := new(big.Float).SetPrec(2048)
	var abs float64
	for _, v := range x {
		// f(v) is exact for v, v² and (v − m) here: float64 products of float32s.
		s.Add(s, new(big.Float).SetPrec(2048).SetFloat64(f(f64(v))))
		abs += math.Abs(f(f64(v)))
	}
	return s, abs
}

func bigErr(got float64, exact *big.Float) float64 {
	d := new(big.Float).SetPrec(2048).Sub(new(big.Float).SetPrec(2048).SetFloat64(got), exact)
	e, _ := d.Float64()
	return math.Abs(e)
}

// TestIndependentSums: Sum, Sum64, SumSquares and SumSqDev within their
// documented bounds, (n/L + 7)·2^-53·Σ|x| (L ≥ 1) plus half an ulp for Sum,
// of the exact sums.
func TestIndependentSums(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(25, 26))
		for _, n := range []int{0, 1, 2, 3, 7, 8, 15, 16, 31, 33, 63, 64, 65, 127, 129, 300, 1000, 4097} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64()*math.Exp(rng.NormFloat64()*3)) + 50
			}
			bound := func(abs float64) float64 { return float64(n+7) * 0x1p-53 * abs }
			exact, abs := exactSum(x, func(v float64) float64 { return v })
			want, _ := exact.Float64()
			if err := bigErr(f64(Sum(x)), exact); !(err <= bound(abs)+0.5*ulpOf(float32(want))) {
				t.Errorf("Sum n=%d: error %g", n, err)
			}
			if err := bigErr(Sum64(x), exact); !(err <= bound(abs)) {
				t.Errorf("Sum64 n=%d: error %g", n, err)
			}
			exact, abs = exactSum(x, func(v float64) float64 { return v * v })
			if err := bigErr(SumSquares(x), exact); !(err <= bound(abs)) {
				t.Errorf("SumSquares n=%d: error %g", n, err)
			}
			const m = 49.75 // exact differences v − m (v near 50)
			exact, abs = exactSum(x, func(v float64) float64 { return (v - m) * (v - m) })
			if err := bigErr(SumSqDev(x, m), exact); !(err <= 2*bound(abs)) {
				t.Errorf("SumSqDev n=%d: error %g", n, err)
			}
		}
	})
}

// TestIndependentSumDotDev: SumDotDev's two sums within Sum64's bound,
// (n/L + 7)·2^-53·Σ|term| (twice that for the products, each rounded once),
// of the exact Σdy and Σdy·(x − m) (big.Float), on every level, for lengths
// that leave every tail, at unaligned offsets, with x near 50 and m its
// centre (group norm's backward pass; x − m is exact in float64 there).
func TestIndependentSumDotDev(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(29, 30))
		for _, n := range []int{0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 64, 65, 127, 129, 300, 1000, 4097} {
			dy, x := make([]float32, n), make([]float32, n)
			for i := range x {
				dy[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*2))
				x[i] = 50 + float32(rng.NormFloat64())
			}
			const m = 49.75
			es, ed := new(big.Float).SetPrec(2048), new(big.Float).SetPrec(2048)
			var as, ad float64
			for i := range x {
				g := new(big.Float).SetPrec(2048).SetFloat64(float64(dy[i]))
				es.Add(es, g)
				d := new(big.Float).SetPrec(2048).SetFloat64(float64(x[i]) - m)
				ed.Add(ed, d.Mul(d, g))
				as += math.Abs(float64(dy[i]))
				ad += math.Abs(float64(dy[i]) * (float64(x[i]) - m))
			}
			bound := func(abs float64) float64 { return float64(n+7) * 0x1p-53 * abs }
			dys, _ := padded(dy, n%3)
			xs, _ := padded(x, (n+1)%4)
			s, d := SumDotDev(dys, xs, m)
			if err := bigErr(s, es); !(err <= bound(as)) {
				t.Errorf("SumDotDev n=%d: Σdy error %g (bound %g)", n, err, bound(as))
			}
			if err := bigErr(d, ed); !(err <= 2*bound(ad)) {
				t.Errorf("SumDotDev n=%d: Σdy·(x − m) error %g (bound %g)", n, err, 2*bound(ad))
			}
		}
	})
}

// TestIndependentAffine64: Affine64 against a·x + c in big-float arithmetic, rounded to float32: within
// half a float32 ulp of the exact value plus 2⁻⁵³ of it (the float64 rounding before the float32 one), on
// every level, for group norm's case of a large mean: c = β − μ·a with μ = 1000.3, x of spread 1 around μ.
func TestIndependentAffine64(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(31, 32))
		const mu, a, b = 1000.3, 0.37, -0.25
		c := b - mu*a
		for _, n := range []int{1, 7, 8, 9, 31, 33, 1000} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(mu + rng.NormFloat64())
			}
			dst := make([]float32, n)
			xs, _ := padded(x, n%3)
			Affine64(dst, xs, a, c)
			for i, v := range x {
				e := new(big.Float).SetPrec(2048).SetFloat64(a)
				e.Mul(e, new(big.Float).SetPrec(2048).SetFloat64(float64(v)))
				e.Add(e, new(big.Float).SetPrec(2048).SetFloat64(c))
				want, _ := e.Float64()
				if err := bigErr(float64(dst[i]), e); !(err <= 0.5*ulpOf(float32(want))+0x1p-53*math.Abs(want)) {
					t.Fatalf("n=%d x=%v: %v, want %v (error %g)", n, v, dst[i], want, err)
				}
			}
		}
	})
}

// TestIndependentMix: Mix and Mix64 within len(in)·2^-53·Σ|c·x| (plus half
// a float32 ulp for Mix) of the exact Σ_j c_rj·x_j.
func TestIndependentMix(t *testing.T) {
	forEachLevel(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(27, 28))
		for rows := 1; rows <= MaxMixRows; rows++ {
			for nin := 1; nin <= MaxMixInputs; nin++ {
				const n = 37
				coef := make([]float64, rows*nin)
				for i := range coef {
					coef[i] = rng.NormFloat64()
				}
				in32, in64 := make([][]float32, nin), make([][]float64, nin)
				for j := range nin {
					in32[j], in64[j] = make([]float32, n), make([]float64, n)
					for i := range n {
						in32[j][i] = float32(rng.NormFloat64())
						in64[j][i] = rng.NormFloat64()
					}
				}
				out32, out64 := make([][]float32, rows), make([][]float64, rows)
				for r := range rows {
					out32[r], out64[r] = make([]float32, n), make([]float64, n)
				}
				Mix(out32, coef, in32)
				Mix64(out64, coef, in64)
				for r := range rows {
					for i := range n {
						e32, e64 := new(big.Float).SetPrec(2048), new(big.Float).SetPrec(2048)
						var a32, a64 float64
						for j := range nin {
							c := new(big.Float).SetPrec(2048).SetFloat64(coef[r*nin+j])
							e32.Add(e32, new(big.Float).SetPrec(2048).Mul(c, big.NewFloat(f64(in32[j][i]))))
							e64.Add(e64, new(big.Float).SetPrec(2048).Mul(c, big.NewFloat(in64[j][i])))
							a32 += math.Abs(coef[r*nin+j] * f64(in32[j][i]))
							a64 += math.Abs(coef[r*nin+j] * in64[j][i])
						}
						w32, _ := e32.Float64()
						what := fmt.Sprintf("%d×%d row %d [%d]", rows, nin, r, i)
						if err := bigErr(f64(out32[r][i]), e32); !(err <= float64(nin)*0x1p-53*a32+0.5*ulpOf(float32(w32))) {
							t.Fatalf("Mix %s: %g, exact %g", what, out32[r][i], w32)
						}
						if err := bigErr(out64[r][i], e64); !(err <= float64(nin)*0x1p-53*a64) {
							w64, _ := e64.Float64()
							t.Fatalf("Mix64 %s: %g, exact %g", what, out64[r][i], w64)
						}
					}
				}
			}
		}
	})
}
