package gemm

import "testing"

// BenchmarkPackA measures packing one mc×kc block of A for the active
// kernel's tile, both layouts of stored A (compare the levels with
// HOLDGO_ISA=avx2 or generic).
func BenchmarkPackA(b *testing.B) {
	kern := activeKernel()
	const mc, kc, lda = 288, 576, 1024
	a := make([]float32, mc*lda+kc*lda)
	dst := make([]float32, mc*kc)
	for _, trans := range []bool{false, true} {
		name := "N"
		if trans {
			name = "T"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(mc * kc * 4)
			for b.Loop() {
				kern.packA(dst, trans, a, lda, 0, mc, 0, kc, kern.mr)
			}
		})
	}
}
