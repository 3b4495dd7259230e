package vec

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"holdgo/internal/isa"
)

// BenchmarkVec times each kernel at every level on 64K and 1M elements and
// reports GB/s (bytes read + written) and ns per element. "triad" is
// AddScaled (a = b + s·c, STREAM's triad) and "copy" the built-in copy: the
// bandwidth the memory-bound kernels are measured against.
func BenchmarkVec(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, k := range []struct {
		name  string
		bytes int // per element
		run   func(x, y, z, w []float32)
	}{
		{"copy", 8, func(x, y, _, _ []float32) { copy(x, y) }},
		{"triad", 12, func(x, y, z, _ []float32) { AddScaled(x, y, z, 0.5) }},
		{"Add", 12, func(x, y, z, _ []float32) { Add(x, y, z) }},
		{"Mul", 12, func(x, y, z, _ []float32) { Mul(x, y, z) }},
		{"Scale", 8, func(x, y, _, _ []float32) { Scale(x, y, 0.5) }},
		{"Acc", 12, func(x, y, _, _ []float32) { Acc(x, y) }},
		{"Axpy", 12, func(x, y, _, _ []float32) { Axpy(x, y, 1e-3) }},
		{"Sum", 4, func(x, _, _, _ []float32) { Sum(x) }},
		{"SumSquares", 4, func(x, _, _, _ []float32) { SumSquares(x) }},
		{"EMA", 12, func(x, y, _, _ []float32) { EMA(x, y, 1e-3) }},
		{"Adam", 28, func(x, y, z, w []float32) { Adam(x, y, z, w, 0.9, 0.999, 1e-3, 1, 1e-8) }},
		{"Exp", 8, func(x, y, _, _ []float32) { Exp(x, y) }},
		{"Sigmoid", 8, func(x, y, _, _ []float32) { Sigmoid(x, y) }},
		{"SiLU", 8, func(x, y, _, _ []float32) { SiLU(x, y) }},
		{"SiLUGrad", 12, func(x, y, z, _ []float32) { SiLUGrad(x, y, z) }},
		{"Tanh", 8, func(x, y, _, _ []float32) { Tanh(x, y) }},
	} {
		for _, level := range isa.Levels() {
			for _, n := range []int{1 << 16, 1 << 20} {
				b.Run(fmt.Sprintf("%s/%s/n=%dK", k.name, level, n>>10), func(b *testing.B) {
					if k.name == "copy" && level != isa.Generic {
						b.Skip("copy does not depend on the level")
					}
					prev, _ := isa.Set(level)
					defer isa.Set(prev)
					s := make([][]float32, 4)
					for i := range s {
						s[i] = make([]float32, n)
						for j := range s[i] {
							s[i][j] = float32(rng.NormFloat64())
						}
					}
					for j := range s[3] {
						s[3][j] *= s[3][j] // Adam's v ≥ 0
					}
					b.ResetTimer()
					for range b.N {
						k.run(s[0], s[1], s[2], s[3])
					}
					sec := b.Elapsed().Seconds()
					b.ReportMetric(float64(k.bytes)*float64(n)*float64(b.N)/sec/1e9, "GB/s")
					b.ReportMetric(sec*1e9/float64(n)/float64(b.N), "ns/elem")
				})
			}
		}
	}
}
