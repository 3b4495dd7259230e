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
