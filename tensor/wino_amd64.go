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

// winoW43x8AVX2, winoW43x16AVX512 and their Flip versions are the F(4,3)
// weight transform of 8 or 16 kernels (see wino_asm_gen.go): ks[l] points at
// kernel l's nine taps (read rotated by 180° by the Flip kernels), element ξ
// of the results goes to u[ξ·stride : ξ·stride+lanes].
//
//go:noescape
func winoW43x8AVX2(u *float32, stride int, ks *[8]*float32, buf *[216]float32)

//go:noescape
func winoW43x8FlipAVX2(u *float32, stride int, ks *[8]*float32, buf *[216]float32)

//go:noescape
func winoW43x16AVX512(u *float32, stride int, ks *[16]*float32, buf *[432]float32)

//go:noescape
func winoW43x16FlipAVX512(u *float32, stride int, ks *[16]*float32, buf *[432]float32)

// winoWLanes is the number of kernels winoW43 transforms per call at the
// current instruction-set level, 0 where it has no kernel.
func winoWLanes() int {
	switch isa.Level() {
	case isa.AVX512:
		return 16
	case isa.AVX2:
		return 8
	}
	return 0
}

// winoW43 runs the weight kernel of winoWLanes lanes on the kernels ks[:lanes]
// (each pointing at nine floats) into u[off + ξ·stride + l] (checked to lie
// in u).
func winoW43(u []float32, off, stride int, ks *[16]*float32, flip bool, buf *[432]float32) {
	lanes := winoWLanes()
	_ = u[off+35*stride+lanes-1]
	switch {
	case lanes == 16 && flip:
		winoW43x16FlipAVX512(&u[off], stride, ks, buf)
	case lanes == 16:
		winoW43x16AVX512(&u[off], stride, ks, buf)
	case flip:
		winoW43x8FlipAVX2(&u[off], stride, (*[8]*float32)(ks[:8]), (*[216]float32)(buf[:216]))
	default:
		winoW43x8AVX2(&u[off], stride, (*[8]*float32)(ks[:8]), (*[216]float32)(buf[:216]))
	}
}

// winoWG43x8AVX2 and winoWG43x16AVX512 add the F(4,3) weight gradient
// Gᵀ dU G of 8 or 16 consecutive kernels to dw[0 : 9·lanes] (see
// wino_asm_gen.go), element ξ of their dU at du[ξ·stride : ξ·stride+lanes].
//
//go:noescape
func winoWG43x8AVX2(dw *float32, du *float32, stride int, buf *[216]float32)

//go:noescape
func winoWG43x16AVX512(dw *float32, du *float32, stride int, buf *[432]float32)

// winoWG43 runs the weight-gradient kernel of winoWLanes lanes: dw[dwOff :
// dwOff+9·lanes] += the lanes' Gᵀ dU G, dU's element ξ of lane l at
// du[duOff + ξ·stride + l] (both checked to lie in the slices).
func winoWG43(dw []float32, dwOff int, du []float32, duOff, stride int, buf *[432]float32) {
	lanes := winoWLanes()
	_ = dw[dwOff+9*lanes-1]
	_ = du[duOff+35*stride+lanes-1]
	if lanes == 16 {
		winoWG43x16AVX512(&dw[dwOff], &du[duOff], stride, buf)
		return
	}
	winoWG43x8AVX2(&dw[dwOff], &du[duOff], stride, (*[216]float32)(buf[:216]))
}

// padRowsAVX2 is padRows' kernel (see wino_asm_gen.go).
//
//go:noescape
func padRowsAVX2(dst *float32, src *float32, rows, w, wp int, mask *[8]int32)

// padMasks[8−r : 16−r] is the VMASKMOVPS mask of the first r lanes.
var padMasks = [16]int32{-1, -1, -1, -1, -1, -1, -1, -1}

// padRows writes rows rows of w floats from src (back to back) into dst,
// rows wp floats apart, each as a zero, the row, and zeros to wp (padInput's
// layout). The kernel runs where winoX8 holds and the zeros after a row are
// at most eight (wp ≤ w + 9, wp ≥ 8), else padRowsGo.
func padRows(dst, src []float32, rows, w, wp int) {
	if rows <= 0 {
		return
	}
	if !winoX8() || wp < 8 || wp > w+9 || w < 1 {
		padRowsGo(dst, src, rows, w, wp)
		return
	}
	_, _ = dst[rows*wp-1], src[rows*w-1]
	padRowsAVX2(&dst[0], &src[0], rows, w, wp, (*[8]int32)(padMasks[8-w%8:16-w%8]))
}
