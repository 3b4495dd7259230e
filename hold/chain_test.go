package hold

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestChainMatchesHold3: the general double-double path run on the HOLD-3 drift agrees with the
// closed-form polynomial evaluator on a dense grid t ∈ [1e-5, 12], for α values outside the vectors'
// (0.3, 1.5) too, so both the general path and the α-polynomials are checked.
func TestChainMatchesHold3(t *testing.T) {
	coupling, xi := holdChainParams(3)
	w := worstTable{}
	for _, alpha := range []float64{0, 0.02, 0.3, 1.5} {
		closed, err := newHold3Kernel(alpha)
		if err != nil {
			t.Fatal(err)
		}
		general := newChainKernel(coupling, xi, alpha)
		for tm := 1e-5; tm <= 12; tm *= 1.25 {
			for _, marginal := range []bool{false, true} {
				a, b := closed.eval(tm, marginal), general.eval(tm, marginal)
				w.add("mean", rowErr(&a.exp, b.exp.Rows()))
				w.add("sigma", covErr(&a.sigma, b.sigma.Rows()))
				w.add("chol", rowErr(&a.chol, b.chol.Rows()))
				w.add("ell", relErr(a.ell, b.ell, 0))
			}
		}
	}
	w.check(t, func(string) float64 { return 1e-12 })
}

// TestDoubleDouble checks the dd operations against 256-bit big.Float on random operands.
func TestDoubleDouble(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	toBig := func(a dd) *big.Float {
		x := new(big.Float).SetPrec(256).SetFloat64(a.hi)
		return x.Add(x, new(big.Float).SetFloat64(a.lo))
	}
	relDiff := func(got dd, want *big.Float) float64 {
		d := new(big.Float).SetPrec(256).Sub(toBig(got), want)
		q, _ := d.Quo(d, want).Float64()
		return math.Abs(q)
	}
	random := func() dd {
		hi := (rng.Float64() + 0.1) * math.Ldexp(1, rng.IntN(40)-20)
		if rng.IntN(2) == 0 {
			hi = -hi
		}
		return ddAdd(ddFrom(hi), ddFrom(hi*rng.Float64()*1e-17))
	}
	var worst float64
	for i := 0; i < 2000; i++ {
		a, b := random(), random()
		ba, bb := toBig(a), toBig(b)
		worst = math.Max(worst, relDiff(ddMul(a, b), new(big.Float).SetPrec(256).Mul(ba, bb)))
		worst = math.Max(worst, relDiff(ddDiv(a, b), new(big.Float).SetPrec(256).Quo(ba, bb)))
		abs := dd{math.Abs(a.hi), math.Copysign(a.lo, a.lo*a.hi)}
		worst = math.Max(worst, relDiff(ddSqrt(abs), new(big.Float).SetPrec(256).Sqrt(toBig(abs))))
		// addition is judged relative to the larger operand (cancellation is exact in dd)
		sum := new(big.Float).SetPrec(256).Add(ba, bb)
		d := new(big.Float).SetPrec(256).Sub(toBig(ddAdd(a, b)), sum)
		scale := math.Max(math.Abs(a.hi), math.Abs(b.hi))
		q, _ := d.Float64()
		worst = math.Max(worst, math.Abs(q)/scale)
	}
	t.Logf("dd worst relative error %.2e", worst)
	if !(worst <= 1e-30) {
		t.Errorf("dd worst relative error %.3e", worst)
	}
}

// BenchmarkKernel reports the cost of one kernel evaluation (per sample in Perturb).
func BenchmarkKernel(b *testing.B) {
	for _, order := range []int{2, 3, 4} {
		cfg := DefaultConfig(KindHOLD)
		cfg.Order = order
		s, err := New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(map[int]string{2: "hold2", 3: "hold3", 4: "hold4"}[order], func(b *testing.B) {
			tm := 1e-5
			for i := 0; i < b.N; i++ {
				_ = s.Kernel(tm)
				tm *= 1.7
				if tm > 7 {
					tm = 1e-5
				}
			}
		})
	}
}
