package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"holdgo/internal/isa"
)

// BenchmarkVec times each kernel at every level on 64K, 1M and 16M elements
// (in L2, in L3, in memory) and
// reports GB/s (bytes read + written) and ns per element. "triad" is
// AddScaled (a = b + s·c, STREAM's triad) and "copy" the built-in copy: the
// bandwidth the memory-bound kernels are measured against.
func BenchmarkVec(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []struct {
		name  string
		bytes int // per element
		run   func(x, y, z, w []float32)
		// wide, when set, replaces run: 8 float32 rows s and 8 float64 rows d.
		wide func(s [][]float32, d [][]float64)
	}{
		{name: "copy", bytes: 8, run: func(x, y, _, _ []float32) { copy(x, y) }},
		{name: "triad", bytes: 12, run: func(x, y, z, _ []float32) { AddScaled(x, y, z, 0.5) }},
		{name: "Add", bytes: 12, run: func(x, y, z, _ []float32) { Add(x, y, z) }},
		{name: "Mul", bytes: 12, run: func(x, y, z, _ []float32) { Mul(x, y, z) }},
		{name: "Scale", bytes: 8, run: func(x, y, _, _ []float32) { Scale(x, y, 0.5) }},
		{name: "Acc", bytes: 12, run: func(x, y, _, _ []float32) { Acc(x, y) }},
		{name: "Axpy", bytes: 12, run: func(x, y, _, _ []float32) { Axpy(x, y, 1e-3) }},
		{name: "Sum", bytes: 4, run: func(x, _, _, _ []float32) { Sum(x) }},
		{name: "SumSquares", bytes: 4, run: func(x, _, _, _ []float32) { SumSquares(x) }},
		{name: "EMA", bytes: 12, run: func(x, y, _, _ []float32) { EMA(x, y, 1e-3) }},
		{name: "Adam", bytes: 28, run: func(x, y, z, w []float32) { Adam(x, y, z, w, 0.9, 0.999, 1e-3, 1, 1e-8) }},
		{name: "Exp", bytes: 8, run: func(x, y, _, _ []float32) { Exp(x, y) }},
		{name: "Sigmoid", bytes: 8, run: func(x, y, _, _ []float32) { Sigmoid(x, y) }},
		{name: "SiLU", bytes: 8, run: func(x, y, _, _ []float32) { SiLU(x, y) }},
		{name: "SiLUGrad", bytes: 12, run: func(x, y, z, _ []float32) { SiLUGrad(x, y, z) }},
		{name: "Tanh", bytes: 8, run: func(x, y, _, _ []float32) { Tanh(x, y) }},
		{name: "Sin", bytes: 8, run: func(x, y, _, _ []float32) { Sin(x, y) }},
		{name: "SumSqDev", bytes: 4, run: func(x, _, _, _ []float32) { SumSqDev(x, 0.5) }},
		{name: "SumDotDev", bytes: 8, run: func(x, y, _, _ []float32) { SumDotDev(x, y, 0.5) }},
		// The HOLD-3 reparameterisation: x_t (3 rows) from q0 and ε (3 rows).
		{name: "Mix3x4", bytes: 28, wide: func(s [][]float32, _ [][]float64) { Mix(s[4:7], perturbCoef[:], s[:4]) }},
		// The HOLD-3 Lie–Trotter A-step in place: x ← e^{Ah}·x + chol·z.
		{name: "Mix64_3x6", bytes: 72, wide: func(_ [][]float32, d [][]float64) { Mix64(d[:3], aStepCoef[:], d[:6]) }},
		// The B-step on the last block: x ← (1 + cΛ)·x + c·score.
		{name: "Mix64_1x2", bytes: 24, wide: func(_ [][]float32, d [][]float64) { Mix64(d[:1], []float64{1.01, 0.02}, d[:2]) }},
	} {
		for _, level := range isa.Levels() {
			for _, n := range []int{1 << 16, 1 << 20, 1 << 24} {
				b.Run(fmt.Sprintf("%s/%s/n=%dK", k.name, level, n>>10), func(b *testing.B) {
					if k.name == "copy" && level != isa.Generic {
						b.Skip("copy does not depend on the level")
					}
					prev, _ := isa.Set(level)
					defer isa.Set(prev)
					rows := 4
					if k.wide != nil {
						rows = 8
					}
					s := make([][]float32, rows)
					for i := range s {
						s[i] = make([]float32, n)
						for j := range s[i] {
							s[i][j] = float32(rng.NormFloat64())
						}
					}
					for j := range s[3] {
						s[3][j] *= s[3][j] // Adam's v ≥ 0
					}
					var d [][]float64
					if k.wide != nil {
						d = make([][]float64, 8)
						for i := range d {
							d[i] = make([]float64, n)
							for j := range d[i] {
								d[i][j] = rng.NormFloat64()
							}
						}
					}
					b.ResetTimer()
					for range b.N {
						if k.wide != nil {
							k.wide(s, d)
						} else {
							k.run(s[0], s[1], s[2], s[3])
						}
					}
					sec := b.Elapsed().Seconds()
					b.ReportMetric(float64(k.bytes)*float64(n)*float64(b.N)/sec/1e9, "GB/s")
					b.ReportMetric(sec*1e9/float64(n)/float64(b.N), "ns/elem")
				})
			}
		}
	}
}

// perturbCoef and aStepCoef are HOLD-3-like matrices (mean | Cholesky
// factor; transition | Cholesky factor) for the benchmarks.
var (
	perturbCoef = [12]float64{0.9, 0.1, 0, 0, 0.2, 0.3, 0.4, 0, -0.1, 0.2, 0.3, 0.5}
	aStepCoef   = [18]float64{0.99, 0.01, 0, 0.01, 0, 0, -0.01, 0.98, 0.02, 0.02, 0.03, 0, 0, -0.02, 0.97, 0.01, 0.02, 0.04}
)
