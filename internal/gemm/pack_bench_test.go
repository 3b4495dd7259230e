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

// BenchmarkPackB packs a 512×1024 block of a row-major B with stride 1024
// (square 1024's k slice) into the active kernel's column panels.
func BenchmarkPackB(b *testing.B) {
	kern := activeKernel()
	const kc, nc, ldb = 512, 1024, 1024
	src := make([]float32, kc*ldb)
	for i := range src {
		src[i] = float32(i % 7) // real pages, not the zero page
	}
	dst := make([]float32, kc*nc)
	b.SetBytes(kc * nc * 4)
	for b.Loop() {
		kern.packB(dst, false, src, ldb, 0, kc, 0, nc, kern.nr)
	}
}
