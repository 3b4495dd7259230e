//go:build !noasm

package tensor

import "holdgo/internal/isa"

//go:generate go run wino_asm_gen.go

// winoIn43x8AVX2 is the F(4,3) input transform of eight patches (see
// wino_asm_gen.go): buf lane-major, element ξ of the results at
// v[ξ·stride : ξ·stride+8].
//
//go:noescape
func winoIn43x8AVX2(v *float32, stride int, buf *[288]float32)

// winoX8 reports whether the eight-patch kernel runs at the current
// instruction-set level (AVX2; AVX-512 machines run the AVX2 kernel).
func winoX8() bool {
	l := isa.Level()
	return l == isa.AVX2 || l == isa.AVX512
}

// winoIn43x8 runs the kernel; v[off + ξ·stride + l] for ξ < 36, l < 8 must
// lie in v (checked).
func winoIn43x8(v []float32, off, stride int, buf *[288]float32) {
	_ = v[off+35*stride+7]
	winoIn43x8AVX2(&v[off], stride, buf)
}

// winoIn43x8GAVX2 is winoIn43x8AVX2 with the gather: patch l's rows start at
// src[offs[l]], src[offs[l]+wp], … (each row load reads eight floats).
//
//go:noescape
func winoIn43x8GAVX2(v *float32, stride int, src *float32, offs *[8]int, wp int, buf *[288]float32)

// winoIn43x8G transforms the eight 6×6 patches of src whose top-left
// elements are src[offs[l]], rows wp apart, into v[off + ξ·stride + l]; every
// row read, eight floats from src[offs[l] + r·wp], must lie in src (checked).
func winoIn43x8G(v []float32, off, stride int, src []float32, offs *[8]int, wp int, buf *[288]float32) {
	_ = v[off+35*stride+7]
	for _, o := range offs {
		if o < 0 || o+5*wp+8 > len(src) {
			panic("tensor: winoIn43x8G: patch outside the source")
		}
	}
	winoIn43x8GAVX2(&v[off], stride, &src[0], offs, wp, buf)
}

// winoOut43x8AVX2 and winoOut43x8BetaAVX2 are the F(4,3) output transform of
// eight tiles (see wino_asm_gen.go): M[ξ] of tile l at m[ξ·mstride + l], row
// i of tile l's 4×4 result plus bias[l] stored at rows[8i+l] (four floats;
// the Beta kernel stores beta·dst + that).
//
//go:noescape
func winoOut43x8AVX2(m *float32, mstride int, rows *[32]*float32, bias *[8]float32, tmp *[192]float32, beta float32)

//go:noescape
func winoOut43x8BetaAVX2(m *float32, mstride int, rows *[32]*float32, bias *[8]float32, tmp *[192]float32, beta float32)

// winoOut43x8 runs the output kernel on m[off + ξ·mstride + l] (checked to lie
// in m); every rows entry must point at four writable floats.
func winoOut43x8(m []float32, off, mstride int, rows *[32]*float32, bias *[8]float32, tmp *[192]float32, beta float32) {
	_ = m[off+35*mstride+7]
	if beta == 0 {
		winoOut43x8AVX2(&m[off], mstride, rows, bias, tmp, 0)
		return
	}
	winoOut43x8BetaAVX2(&m[off], mstride, rows, bias, tmp, beta)
}

// winoGradOut43x8AVX2 is the adjoint of the output transform (Z = A dY Aᵀ)
// of eight 4×4 tiles (see wino_asm_gen.go): row i of tile l is the four
// floats at rows[8i+l]; element ξ of the results goes to z[ξ·zstride : +8].
//
//go:noescape
func winoGradOut43x8AVX2(z *float32, zstride int, rows *[32]*float32, tmp *[192]float32)

// winoGradOut43x8 runs it into z[off + ξ·zstride + l] (checked to lie in z);
// every rows entry must point at four readable floats.
func winoGradOut43x8(z []float32, off, zstride int, rows *[32]*float32, tmp *[192]float32) {
	_ = z[off+35*zstride+7]
	winoGradOut43x8AVX2(&z[off], zstride, rows, tmp)
}
