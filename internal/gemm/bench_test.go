package gemm

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"holdgo/internal/parallel"
)

// benchShapes are the products the engine runs most. The MLP layer
// y = x·W (x 512×128, W 128×128) gives the forward product and its two
// backward products; the four transpose variants of the same size are all
// listed. The conv shapes are im2col products (rows = output pixels).
var benchShapes = []struct {
	name           string
	transA, transB bool
	m, n, k        int
}{
	{"square256", false, false, 256, 256, 256},
	{"square512", false, false, 512, 512, 512},
	{"square1024", false, false, 1024, 1024, 1024},
	{"mlp_fwd_NN_m512k128n128", false, false, 512, 128, 128},
	{"mlp_dX_NT_m512k128n128", false, true, 512, 128, 128},
	{"mlp_TN_m512k128n128", true, false, 512, 128, 128},
	{"mlp_TT_m512k128n128", true, true, 512, 128, 128},
	{"mlp_dW_TN_m128k512n128", true, false, 128, 128, 512},
	{"conv_m32768k576n64", false, false, 32768, 64, 576},
	{"conv_m8192k1152n128", false, false, 8192, 128, 1152},
}

// BenchmarkSgemm reports, per shape, instruction-set level and thread count,
// GFLOP/s of wall-clock time and GFLOP per CPU-second of the process
// ("GFLOP/cpu-s": per-core throughput, which stays meaningful when other
// processes share the cores; with threads=2 it is the per-core average).
// Compare with the core's measured FMA ceiling (holdctl bench peak, internal/peak). Run with e.g.
//
//	go test ./internal/gemm -run '^$' -bench 'Sgemm/square512/' -benchtime 20x
func BenchmarkSgemm(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, s := range benchShapes {
		b.Run(s.name, func(b *testing.B) {
			a := randSlice(rng, s.m*s.k)
			bm := randSlice(rng, s.k*s.n)
			c := randSlice(rng, s.m*s.n)
			lda, ldb := s.k, s.n
			if s.transA {
				lda = s.m
			}
			if s.transB {
				ldb = s.k
			}
			flops := 2 * float64(s.m) * float64(s.n) * float64(s.k)
			for _, level := range Levels() {
				b.Run(level, func(b *testing.B) {
					for _, threads := range []int{1, 2} {
						b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
							prevISA, _ := SetISA(level)
							prevThreads := parallel.SetThreads(threads)
							defer func() {
								SetISA(prevISA)
								parallel.SetThreads(prevThreads)
							}()
							warmUp(func() { Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n) })
							runtime.GC() // no collector work left over from the set-up
							b.ResetTimer()
							cpu0 := cpuSeconds()
							for range b.N {
								Sgemm(s.transA, s.transB, s.m, s.n, s.k, 1, a, lda, bm, ldb, 0, c, s.n)
							}
							cpu := cpuSeconds() - cpu0
							work := flops * float64(b.N) / 1e9
							b.ReportMetric(work/b.Elapsed().Seconds(), "GFLOP/s")
							if cpu > 0 {
								b.ReportMetric(work/cpu, "GFLOP/cpu-s")
							}
						})
					}
				})
			}
		})
	}
}

// warmUp runs f for 0.2 s: pooled buffers are allocated and the OS has
// spread a fresh process's threads over the cores (for the first few
// milliseconds both threads of a 2-thread product can share one core), as
// holdctl bench does before timing.
func warmUp(f func()) {
	for start := time.Now(); time.Since(start) < 200*time.Millisecond; {
		f()
	}
}

func randSlice(rng *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(rng.NormFloat64())
	}
	return s
}
