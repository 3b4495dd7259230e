package tensor

import (
	"fmt"
	"testing"

	"holdgo/internal/parallel"
)

// BenchmarkMatMulMLP times the toy MLP's three products at batch 512 and
// width 128: forward x·Wᵀ, weight gradient dYᵀ·x, input gradient dY·W.
func BenchmarkMatMulMLP(b *testing.B) {
	type mm struct {
		name           string
		a, w           []int
		transA, transB bool
	}
	for _, c := range []mm{
		{"forward_xWt_512x128x128", []int{512, 128}, []int{128, 128}, false, true},
		{"dW_dYtX_128x512x128", []int{512, 128}, []int{512, 128}, true, false},
		{"dX_dYW_512x128x128", []int{512, 128}, []int{128, 128}, false, false},
	} {
		for _, threads := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", c.name, threads), func(b *testing.B) {
				prev := parallel.SetThreads(threads)
				defer parallel.SetThreads(prev)
				r := NewRNG(1)
				x, w := RandN(r, c.a...), RandN(r, c.w...)
				shape, _ := MatMulShape(c.a, c.w, c.transA, c.transB)
				out := Zeros(shape...)
				k := c.a[1]
				if c.transA {
					k = c.a[0]
				}
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					MatMul(out, x, w, c.transA, c.transB)
				}
				flops := 2 * float64(shape[0]*shape[1]*k) * float64(b.N)
				b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkElementwise reports memory bandwidth of typical element-wise ops
// on 1M elements.
func BenchmarkElementwise(b *testing.B) {
	const n = 1 << 20
	r := NewRNG(2)
	x, y, out := RandN(r, n), RandN(r, n), Zeros(n)
	for _, c := range []struct {
		name  string
		bytes int
		f     func()
	}{
		{"Add", 12, func() { Add(out, x, y) }},
		{"SiLU", 8, func() { SiLU(out, x) }},
		{"SiLUGrad", 12, func() { SiLUGrad(out, x, y) }},
		{"MulScalar", 8, func() { MulScalar(out, x, 2) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				c.f()
			}
			b.ReportMetric(float64(c.bytes*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
