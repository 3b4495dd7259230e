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

// kernAVX512PF and kernAVX2PF are the kernels for a row-major A read in
// place (cs = 1) that also prefetch kc cache lines from pf into L2.
//
//go:noescape
func kernAVX512PF(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32, pf *float32)

//go:noescape
func kernAVX2PF(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32, pf *float32)

// kernAVX512Rows and kernAVX2Rows are the kernels for the tiles of a
// rows-first sweep after the first (row-major Ã in place, B̃ streaming from
// L2): they prefetch B̃ eight k steps ahead, as the PF kernels do too.
//
//go:noescape
func kernAVX512Rows(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

//go:noescape
func kernAVX2Rows(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

// The short tiles (see kernel.short): kernAVX512R{8,4} and kernAVX2R{4,2}
// compute the first 8 or 4 (2) rows of the AVX-512 (AVX2) tile.
//
//go:noescape
func kernAVX512R8(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

//go:noescape
func kernAVX512R4(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

//go:noescape
func kernAVX2R4(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

//go:noescape
func kernAVX2R2(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)

// shortTile wraps an assembly kernel of an mr×nr tile with the bounds
// checks of the other wrappers.
func shortTile(mr, nr int, f func(kc int, a *float32, rs, cs int, b *float32, c *float32, ldc int, alpha, beta float32)) shortKernel {
	return shortKernel{mr: mr, micro: func(kc int, a []float32, rs, cs int, b, c []float32, ldc int, alpha, beta float32) {
		_ = a[(mr-1)*rs+(kc-1)*cs]
		_ = b[nr*kc-1]
		_ = c[(mr-1)*ldc+nr-1]
		f(kc, &a[0], rs, cs, &b[0], &c[0], ldc, alpha, beta)
	}}
}

// skinny{1,2,4,8}AVX512 compute a 32×w tile for products with a short side
// (see asm_gen.go and skinny.go).
//
//go:noescape
func skinny1AVX512(kc int, a *float32, b *float32, t *float32)

//go:noescape
func skinny2AVX512(kc int, a *float32, b *float32, t *float32)

//go:noescape
func skinny4AVX512(kc int, a *float32, b *float32, t *float32)

//go:noescape
func skinny8AVX512(kc int, a *float32, b *float32, t *float32)

// skinnyAVX512 runs the kernel of width w ∈ {1, 2, 4, 8} on a packed panel
// of 32 rows a (≥ 32·kc floats), packed rows b (≥ w·kc) into t (≥ 32·w).
func skinnyAVX512(w, kc int, a, b, t []float32) {
	_ = a[32*kc-1]
	_ = b[w*kc-1]
	_ = t[32*w-1]
	switch w {
	case 1:
		skinny1AVX512(kc, &a[0], &b[0], &t[0])
	case 2:
		skinny2AVX512(kc, &a[0], &b[0], &t[0])
	case 4:
		skinny4AVX512(kc, &a[0], &b[0], &t[0])
	case 8:
		skinny8AVX512(kc, &a[0], &b[0], &t[0])
	default:
		panic("gemm: skinny kernel width must be 1, 2, 4 or 8")
	}
}

// transpose16 and copyRows are the AVX-512 packers (see asm_gen.go).
//
//go:noescape
func transpose16(dst *float32, dstStride int, src *float32, offs *[16]int, blocks int, mask uint16)

//go:noescape
func copyRows(dst *float32, dstStride int, src *float32, srcStride int, n int, loadMask, storeMask uint32)

// transpose6AVX2 and copyRows16AVX2 are the AVX2 packers of full panels
// (see asm_gen.go); ld and srcStride are in bytes.
//
//go:noescape
func transpose6AVX2(dst *float32, src *float32, ld int, blocks int)

//go:noescape
func copyRows16AVX2(dst *float32, src *float32, srcStride int, n int)

//go:noescape
func copyRows6AVX2(dst *float32, src *float32, srcStride int, n int)

//go:noescape
func transpose8AVX2(dst *float32, dstStride int, src *float32, ld int, blocks int)

//go:noescape
func copyRows6MaskAVX2(dst *float32, src *float32, srcStride int, n int, mask *[8]int32)

// Cache blocks: a B micro-panel (kc×nr floats) stays in L1 while the kernel
// walks an A block of mc rows (kept in L2); the kc×nc block of packed B lives
// in L2/L3.
var (
	avx512Kernel = &kernel{
		isa: AVX512, mr: 12, nr: 32,
		mc: 12 * 24, kc: 576, nc: 1024,
		micro: microAVX512, microPF: microAVX512PF, microRows: microAVX512Rows,
		packA: packAAVX512, packB: packBAVX512,
		skinny: skinnyAVX512,
		short:  []shortKernel{shortTile(4, 32, kernAVX512R4), shortTile(8, 32, kernAVX512R8)},
	}
	avx2Kernel = &kernel{
		isa: AVX2, mr: 6, nr: 16,
		mc: 6 * 48, kc: 576, nc: 1024,
		micro: microAVX2, microPF: microAVX2PF, microRows: microAVX2Rows, kcRows: 1152,
		packA: packAAVX2, packB: packBAVX2,
		short: []shortKernel{shortTile(2, 16, kernAVX2R2), shortTile(4, 16, kernAVX2R4)},
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

// microAVX512PF and microAVX2PF check the tile as the plain wrappers do;
// pf only needs one element (a prefetch never faults).
func microAVX512PF(kc int, a []float32, rs int, b, c []float32, ldc int, alpha, beta float32, pf []float32) {
	_ = a[11*rs+kc-1]
	_ = b[32*kc-1]
	_ = c[11*ldc+31]
	kernAVX512PF(kc, &a[0], rs, 1, &b[0], &c[0], ldc, alpha, beta, &pf[0])
}

func microAVX2PF(kc int, a []float32, rs int, b, c []float32, ldc int, alpha, beta float32, pf []float32) {
	_ = a[5*rs+kc-1]
	_ = b[16*kc-1]
	_ = c[5*ldc+15]
	kernAVX2PF(kc, &a[0], rs, 1, &b[0], &c[0], ldc, alpha, beta, &pf[0])
}

func microAVX512Rows(kc int, a []float32, rs int, b, c []float32, ldc int, alpha, beta float32) {
	_ = a[11*rs+kc-1]
	_ = b[32*kc-1]
	_ = c[11*ldc+31]
	kernAVX512Rows(kc, &a[0], rs, 1, &b[0], &c[0], ldc, alpha, beta)
}

func microAVX2Rows(kc int, a []float32, rs int, b, c []float32, ldc int, alpha, beta float32) {
	_ = a[5*rs+kc-1]
	_ = b[16*kc-1]
	_ = c[5*ldc+15]
	kernAVX2Rows(kc, &a[0], rs, 1, &b[0], &c[0], ldc, alpha, beta)
}

// lanes returns a mask of the low n bits.
func lanes(n int) uint32 { return uint32(1)<<n - 1 }

// copyPanel writes n rows of w ≤ 32 floats, row p = src[off+p*ld : +cols]
// zero-padded to w, to dst[p*w : (p+1)*w] (AVX-512 masked moves).
func copyPanel(dst []float32, w int, src []float32, ld, off, cols, n int) {
	if n == 0 {
		return
	}
	_ = src[off+(n-1)*ld+cols-1]
	_ = dst[n*w-1]
	copyRows(&dst[0], 4*w, &src[off], 4*ld, n, lanes(cols), lanes(w))
}

// transposePanel is gatherColumns (pack.go) for cols == w ∈ {12, 16, 32}:
// 16 source rows at a time go through the AVX-512 16×16 transpose, the
// columns beyond the last multiple of 16 are copied in Go.
func transposePanel(panel []float32, w int, src []float32, ld, off, kc int) {
	blocks := kc / 16
	if blocks > 0 {
		_ = panel[kc*w-1]
		for j0 := 0; j0 < w; j0 += 16 {
			rows := min(16, w-j0)
			_ = src[off+(j0+rows-1)*ld+16*blocks-1]
			var offs [16]int
			for r := range offs {
				offs[r] = 4 * min(r, rows-1) * ld
			}
			transpose16(&panel[j0], 4*w, &src[off+j0*ld], &offs, blocks, uint16(lanes(rows)))
		}
	}
	for j := range w {
		s := src[off+j*ld : off+j*ld+kc]
		for p := 16 * blocks; p < kc; p++ {
			panel[p*w+j] = s[p]
		}
	}
}

// packAAVX512 is packA with AVX-512 moves for full 12-row panels.
func packAAVX512(dst []float32, trans bool, a []float32, lda, i0, mc, p0, kc, mr int) {
	for r := 0; r < mc; r += mr {
		rows := min(mr, mc-r)
		panel := dst[r*kc : (r+mr)*kc]
		switch {
		case trans: // panel row p = a[(p0+p)*lda + i0+r : +rows]
			copyPanel(panel, mr, a, lda, p0*lda+i0+r, rows, kc)
		case rows == mr:
			transposePanel(panel, mr, a, lda, (i0+r)*lda+p0, kc)
		default:
			packA(panel, trans, a, lda, i0+r, rows, p0, kc, mr)
		}
	}
}

// packBAVX512 is packB with AVX-512 moves for full 32-column panels.
func packBAVX512(dst []float32, trans bool, b []float32, ldb, p0, kc, j0, nc, nr int) {
	for r := 0; r < nc; r += nr {
		cols := min(nr, nc-r)
		panel := dst[r*kc : (r+nr)*kc]
		switch {
		case !trans: // panel row p = b[(p0+p)*ldb + j0+r : +cols]
			copyPanel(panel, nr, b, ldb, p0*ldb+j0+r, cols, kc)
		case cols == nr:
			transposePanel(panel, nr, b, ldb, (j0+r)*ldb+p0, kc)
		default:
			packB(panel, trans, b, ldb, p0, kc, j0+r, cols, nr)
		}
	}
}

// packAAVX2 is packA with AVX2 moves for the full 6-row panels of a
// row-major A (8 columns at a time; the last kc mod 8 columns in Go). The
// packers in Go cost 15 % of a 1024³ product on one AVX2 thread.
func packAAVX2(dst []float32, trans bool, a []float32, lda, i0, mc, p0, kc, mr int) {
	for r := 0; r < mc; r += mr {
		rows := min(mr, mc-r)
		panel := dst[r*kc : (r+mr)*kc]
		if trans && rows == 6 && kc >= 2 && lda >= 2 {
			// Panel row p = a[(p0+p)*lda + i0+r : +6]: all but the last
			// row in assembly (8-float moves), the last in Go.
			off := p0*lda + i0 + r
			_ = a[off+(kc-2)*lda+7]
			copyRows6AVX2(&panel[0], &a[off], 4*lda, kc-1)
			copy(panel[(kc-1)*6:kc*6], a[off+(kc-1)*lda:off+(kc-1)*lda+6])
			continue
		}
		if trans && rows < 6 && kc >= 2 {
			// A ragged panel of a transposed A (the MLP's weight
			// gradient dYᵀ·x has 128 = 21·6+2 rows): masked loads, so
			// the padding lanes are written as zeros; the last row in
			// Go. Element by element in Go it cost 1.7 % of dYᵀ·x
			// (128×512·512×128) on one AVX2 thread; interleaved A/B on
			// the Intel VM, 31 rounds: 99.6–101.0 → 101.2–102.9 GFLOP/s,
			// 64×512·512×256 95.8 → 98.2.
			var mask [8]int32
			for i := range rows {
				mask[i] = -1
			}
			off := p0*lda + i0 + r
			_ = a[off+(kc-2)*lda+rows-1]
			copyRows6MaskAVX2(&panel[0], &a[off], 4*lda, kc-1, &mask)
			copySmall(panel[(kc-1)*6:kc*6], a[off+(kc-1)*lda:off+(kc-1)*lda+rows])
			continue
		}
		if trans || rows < 6 || kc < 8 {
			packA(panel, trans, a, lda, i0+r, rows, p0, kc, mr)
			continue
		}
		off, blocks := (i0+r)*lda+p0, kc/8
		_ = a[off+5*lda+8*blocks-1]
		_ = panel[48*blocks-1]
		transpose6AVX2(&panel[0], &a[off], 4*lda, blocks)
		for p := 8 * blocks; p < kc; p++ {
			for i := range 6 {
				panel[p*6+i] = a[off+i*lda+p]
			}
		}
	}
}

// packBAVX2 is packB with AVX2 moves for the full 16-column panels of a
// row-major B.
func packBAVX2(dst []float32, trans bool, b []float32, ldb, p0, kc, j0, nc, nr int) {
	full := nc / 16 * 16
	if kc == 0 {
		full = 0
	}
	if trans && full > 0 {
		// Panel row p = column p of 16 stored rows: two 8×8 transposes
		// per 8 k steps (rows 0–7 into the panel's left half, 8–15 into
		// its right), the last kc mod 8 steps in Go. In Go (gatherColumns)
		// this packing took 7 % of x·Wᵀ (512×128·(128×128)ᵀ) on one AVX2
		// thread, 1 % now; holdctl bench gemm, 11 interleaved rounds:
		// 107.6 → 109.9 GFLOP/s, 512×512·(512×512)ᵀ 106.5 → 109.0.
		blocks := kc / 8
		for r := 0; r < full; r += 16 {
			panel := dst[r*kc : (r+16)*kc]
			off := (j0+r)*ldb + p0
			if blocks > 0 {
				_ = b[off+15*ldb+8*blocks-1]
				_ = panel[(8*blocks-1)*16+15]
				transpose8AVX2(&panel[0], 64, &b[off], 4*ldb, blocks)
				transpose8AVX2(&panel[8], 64, &b[off+8*ldb], 4*ldb, blocks)
			}
			for p := 8 * blocks; p < kc; p++ {
				for j := range 16 {
					panel[p*16+j] = b[off+j*ldb+p]
				}
			}
		}
	}
	// The full panels of a row-major B. Rows of B at least 2 KiB apart are
	// copied packBRows rows of every panel at a time, so that each row is
	// read as one run of
	// 64·panels bytes rather than 64 bytes per panel with rows 4·ldb bytes
	// apart (square 1024's 512×1024 block: 8 → 14 GB/s; the product on one
	// AVX2 thread 106 → 109 GFLOP/s). With closer rows the hardware
	// prefetcher follows the panel order well and the blocked one lost
	// 1–2 % (8192×1152·1152×128, 256³); on the AVX-512 kernel's 32-column
	// panels the blocked order made square 1024 slower (165 → 161, two
	// threads 309 → 291), so packBAVX512 keeps the panel order.
	block := kc
	if ldb >= 512 {
		block = packBRows
	}
	for k0 := 0; k0 < kc && full > 0 && !trans; k0 += block {
		rows := min(block, kc-k0)
		for r := 0; r < full; r += 16 {
			off := (p0+k0)*ldb + j0 + r
			_ = b[off+(rows-1)*ldb+15]
			panel := dst[r*kc+k0*16 : r*kc+(k0+rows)*16]
			copyRows16AVX2(&panel[0], &b[off], 4*ldb, rows)
		}
	}
	for r := full; r < nc; r += nr {
		packB(dst[r*kc:(r+nr)*kc], trans, b, ldb, p0, kc, j0+r, min(nr, nc-r), nr)
	}
}

// packBRows is the number of rows of B that packBAVX2 copies per panel in one go.
const packBRows = 16
