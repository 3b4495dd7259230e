package gemm

// genericKernel is the plain-Go path: a 2×4 tile in eight local accumulators,
// reading packed A panels. Larger tiles spill: the Go compiler schedules every
// product of an iteration before the additions, so the live values outgrow
// the 15 usable float registers; 2×4 with k unrolled by two measured fastest
// (≈7 GFLOP/s in-kernel on Zen 5, against ≈4 for 4×4).
var genericKernel = &kernel{
	isa: "generic", mr: 2, nr: 4,
	mc: 256, kc: 256, nc: 2048,
	packedA: true,
	micro:   microGeneric,
}

// microGeneric computes the 2×4 tile C = alpha·A·B + beta·C from a packed A
// panel (a[p*2+i]) and a packed B panel (b[p*4+j]); rs and cs are ignored.
func microGeneric(kc int, a []float32, _, _ int, b, c []float32, ldc int, alpha, beta float32) {
	var c00, c01, c02, c03, c10, c11, c12, c13 float32
	a = a[:2*kc]
	b = b[:4*kc]
	p := 0
	for ; p+1 < kc; p += 2 {
		bb := b[4*p : 4*p+8 : 4*p+8]
		aa := a[2*p : 2*p+4 : 2*p+4]
		a0, a1 := aa[0], aa[1]
		c00 += a0 * bb[0]
		c01 += a0 * bb[1]
		c02 += a0 * bb[2]
		c03 += a0 * bb[3]
		c10 += a1 * bb[0]
		c11 += a1 * bb[1]
		c12 += a1 * bb[2]
		c13 += a1 * bb[3]
		a0, a1 = aa[2], aa[3]
		c00 += a0 * bb[4]
		c01 += a0 * bb[5]
		c02 += a0 * bb[6]
		c03 += a0 * bb[7]
		c10 += a1 * bb[4]
		c11 += a1 * bb[5]
		c12 += a1 * bb[6]
		c13 += a1 * bb[7]
	}
	if p < kc {
		bb := b[4*p : 4*p+4 : 4*p+4]
		a0, a1 := a[2*p], a[2*p+1]
		c00 += a0 * bb[0]
		c01 += a0 * bb[1]
		c02 += a0 * bb[2]
		c03 += a0 * bb[3]
		c10 += a1 * bb[0]
		c11 += a1 * bb[1]
		c12 += a1 * bb[2]
		c13 += a1 * bb[3]
	}
	storeRow4(c[:4:4], c00, c01, c02, c03, alpha, beta)
	storeRow4(c[ldc:ldc+4:ldc+4], c10, c11, c12, c13, alpha, beta)
}

// storeRow4 sets row = alpha·(x0..x3) + beta·row (beta == 0 overwrites).
func storeRow4(row []float32, x0, x1, x2, x3, alpha, beta float32) {
	row = row[:4]
	if beta == 0 {
		row[0], row[1], row[2], row[3] = alpha*x0, alpha*x1, alpha*x2, alpha*x3
		return
	}
	row[0] = alpha*x0 + beta*row[0]
	row[1] = alpha*x1 + beta*row[1]
	row[2] = alpha*x2 + beta*row[2]
	row[3] = alpha*x3 + beta*row[3]
}
