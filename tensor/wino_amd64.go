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
