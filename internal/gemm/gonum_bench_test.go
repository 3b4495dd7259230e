package gemm

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// BenchmarkGonumSgemm runs gonum's pure-Go SGEMM on the same shapes as
// BenchmarkSgemm (single goroutine per call as gonum schedules it), for the
// "≥ 10× gonum" comparison of issue 6.
func BenchmarkGonumSgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	var impl gonum.Implementation
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			a, bm, c := randSlice(rng, s.m*s.k), randSlice(rng, s.k*s.n), randSlice(rng, s.m*s.n)
			lda, ldb := s.k, s.n
			ta, tb := blas.NoTrans, blas.NoTrans
			if s.transA {
				lda, ta = s.m, blas.Trans
			}
			if s.transB {
				ldb, tb = s.k, blas.Trans
			}
			warmUp(func() { impl.Sgemm(ta, tb, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n) })
			b.ResetTimer()
			for b.Loop() {
				impl.Sgemm(ta, tb, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
			}
			b.ReportMetric(2*float64(s.m)*float64(s.n)*float64(s.k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
