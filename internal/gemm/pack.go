package gemm

// Packing copies a block of op(A) or op(B) into the layout the microkernel
// streams through: panels of mr rows of op(A) stored column by column
// (panel[p*mr+i]), and panels of nr columns of op(B) stored row by row
// (panel[p*nr+j]). A ragged last panel is padded with zeros, so the kernel
// always computes a full tile.

// packer is the type of packA and packB (their parameters differ in meaning,
// not in type).
type packer func(dst []float32, trans bool, src []float32, ld, i0, rows, p0, kc, w int)

// packA packs rows [i0, i0+mc) × columns [p0, p0+kc) of op(A) into dst as
// ⌈mc/mr⌉ panels of mr×kc; op(A) = A (row stride lda) or Aᵀ when trans.
func packA(dst []float32, trans bool, a []float32, lda, i0, mc, p0, kc, mr int) {
	for r := 0; r < mc; r += mr {
		rows := min(mr, mc-r)
		panel := dst[r*kc : (r+mr)*kc]
		if trans {
			// op(A)[i][p] = a[p*lda+i]: row p of stored A holds column p.
			for p := range kc {
				src := a[(p0+p)*lda+i0+r:]
				copySmall(panel[p*mr:p*mr+mr], src[:rows])
			}
			continue
		}
		// op(A)[i][p] = a[i*lda+p]: row i of stored A is column i of the panel.
		gatherColumns(panel, mr, a, lda, (i0+r)*lda+p0, rows, kc)
	}
}

// packB packs rows [p0, p0+kc) × columns [j0, j0+nc) of op(B) into dst as
// ⌈nc/nr⌉ panels of kc×nr; op(B) = B (row stride ldb) or Bᵀ when trans.
func packB(dst []float32, trans bool, b []float32, ldb, p0, kc, j0, nc, nr int) {
	for r := 0; r < nc; r += nr {
		cols := min(nr, nc-r)
		panel := dst[r*kc : (r+nr)*kc]
		if !trans {
			// op(B)[p][j] = b[p*ldb+j]: contiguous rows.
			for p := range kc {
				src := b[(p0+p)*ldb+j0+r:]
				copySmall(panel[p*nr:p*nr+nr], src[:cols])
			}
			continue
		}
		// op(B)[p][j] = b[j*ldb+p]: row j of stored B is column j of the panel.
		gatherColumns(panel, nr, b, ldb, (j0+r)*ldb+p0, cols, kc)
	}
}

// gatherColumns fills panel (kc rows of w floats, panel[p*w+j]) with the
// transpose of cols stored rows of length kc: column j of the panel is
// src[off+j*ld : off+j*ld+kc]; columns cols..w-1 are zeroed. It works in
// groups of four source rows read in step, so each store is a contiguous
// run of four and the reads are four sequential streams.
func gatherColumns(panel []float32, w int, src []float32, ld, off, cols, kc int) {
	j := 0
	for ; j+4 <= cols; j += 4 {
		s0 := src[off+j*ld:]
		s0 = s0[:kc]
		s1 := src[off+(j+1)*ld:]
		s1 = s1[:kc]
		s2 := src[off+(j+2)*ld:]
		s2 = s2[:kc]
		s3 := src[off+(j+3)*ld:]
		s3 = s3[:kc]
		for p := range kc {
			out := panel[p*w+j : p*w+j+4 : p*w+j+4]
			out[0], out[1], out[2], out[3] = s0[p], s1[p], s2[p], s3[p]
		}
	}
	for ; j < cols; j++ {
		s0 := src[off+j*ld:]
		s0 = s0[:kc]
		for p, v := range s0 {
			panel[p*w+j] = v
		}
	}
	if cols < w {
		for p := range kc {
			clear(panel[p*w+cols : p*w+w])
		}
	}
}

// copySmall copies src to the start of dst and zeroes the rest of dst. Panel
// rows are short (2 to 32 floats), too short for copy's call to pay off below
// a dozen or so.
func copySmall(dst, src []float32) {
	if len(src) >= 16 {
		n := copy(dst, src)
		clear(dst[n:])
		return
	}
	dst = dst[:len(dst):len(dst)]
	for i, v := range src {
		dst[i] = v
	}
	for i := len(src); i < len(dst); i++ {
		dst[i] = 0
	}
}
