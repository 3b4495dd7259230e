//go:build !noasm

package gemm

import (
	"fmt"
	"slices"
	"testing"
)

// BenchmarkMicro times one microkernel alone, its operands hot in L1: the
// ceiling for Sgemm on this ISA (packed A: rs=1, cs=mr; in-place A: rs=kc).
func BenchmarkMicro(b *testing.B) {
	for _, kern := range kernels {
		if kern.packA {
			continue
		}
		for _, kc := range []int{128, 256} {
			for _, inPlace := range []bool{false, true} {
				b.Run(fmt.Sprintf("%s/kc=%d/inplace=%v", kern.isa, kc, inPlace), func(b *testing.B) {
					a := make([]float32, kern.mr*kc)
					bp := make([]float32, kern.nr*kc)
					c := make([]float32, kern.mr*kern.nr)
					rs, cs := 1, kern.mr
					if inPlace {
						rs, cs = kc, 1
					}
					for range b.N {
						kern.micro(kc, a, rs, cs, bp, c, kern.nr, 1, 1)
					}
					flops := 2 * float64(kern.mr*kern.nr*kc) * float64(b.N)
					b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
				})
			}
		}
	}
}

// BenchmarkPeakFMA measures the FMA ceiling of one core: register-only FMAs,
// as many independent chains as the kernel keeps accumulators, nothing else.
func BenchmarkPeakFMA(b *testing.B) {
	for _, p := range []struct {
		isa   string
		run   func(int)
		flops int // per iteration
	}{{AVX512, fmaPeakAVX512, 24 * 32}, {AVX2, fmaPeakAVX2, 12 * 16}} {
		if !slices.Contains(Levels(), p.isa) {
			continue
		}
		b.Run(p.isa, func(b *testing.B) {
			for range b.N {
				p.run(1000)
			}
			b.ReportMetric(float64(p.flops)*1000*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
