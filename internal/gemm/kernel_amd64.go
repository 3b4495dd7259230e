//go:build !noasm

package gemm

import "holdgo/internal/isa"

//go:generate go run asm_gen.go

// The assembly kernels (kernel_amd64.s, written by asm_gen.go) compute an
// mr×nr tile C = alpha·Ã·B̃ + beta·C with Ã read in place through element
// strides rs and cs, and B̃ a packed panel of kc rows of nr floats.

//go:noescape
func kernAVX512(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

//go:noescape
func kernAVX2(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

// fmaPeakAVX512 and fmaPeakAVX2 run n iterations of 24 (12) independent
// register-only FMAs: the benchmarks' measure of the machine's FMA ceiling.
func fmaPeakAVX512(n int)
func fmaPeakAVX2(n int)

// Cache blocks: a B micro-panel (kc×nr floats) stays in L1 while the kernel
// walks an A block of mc rows (kept in L2); the kc×nc block of packed B lives
// in L2/L3.
var (
	avx512Kernel = &kernel{
		isa: AVX512, mr: 12, nr: 32,
		mc: 12 * 24, kc: 576, nc: 1024,
		micro: microAVX512,
	}
	avx2Kernel = &kernel{
		isa: AVX2, mr: 6, nr: 16,
		mc: 6 * 48, kc: 576, nc: 1024,
		micro: microAVX2,
	}
)

// archKernels lists the assembly kernels this CPU runs, best first.
func archKernels() []*kernel {
	var ks []*kernel
	if isa.Supported(AVX512) {
		ks = append(ks, avx512Kernel)
	}
	if isa.Supported(AVX2) {
		ks = append(ks, avx2Kernel)
	}
	return ks
}

// The wrappers check that every element the tile touches is inside its
// slice, so a driver bug panics instead of corrupting memory.

func microAVX512(kc int, a []float32, rs, cs int, b, c []float32, ldc int, alpha, beta float32) {
	_ = a[11*rs+(kc-1)*cs]
	_ = b[32*kc-1]
	_ = c[11*ldc+31]
	kernAVX512(kc, &a[0], rs, cs, &b[0], &c[0], ldc, alpha, beta)
}

func microAVX2(kc int, a []float32, rs, cs int, b, c []float32, ldc int, alpha, beta float32) {
	_ = a[5*rs+(kc-1)*cs]
	_ = b[16*kc-1]
	_ = c[5*ldc+15]
	kernAVX2(kc, &a[0], rs, cs, &b[0], &c[0], ldc, alpha, beta)
}
