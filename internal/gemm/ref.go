package gemm

// SgemmRef is the plain reference for Sgemm, with the same contract: a triple
// loop over C's entries, each a float32 dot product accumulated in order
// p = 0, 1, …, k-1, then C[i][j] = alpha·dot + beta·C[i][j] (alpha·dot when
// beta == 0; C = beta·C without reading A or B when alpha == 0 or k == 0).
// No blocking, no SIMD, no goroutines: it is the tests' oracle.
func SgemmRef(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	for i := range m {
		for j := range n {
			var dot float32
			if alpha != 0 {
				for p := range k {
					var ap, bp float32
					if transA {
						ap = a[p*lda+i]
					} else {
						ap = a[i*lda+p]
					}
					if transB {
						bp = b[j*ldb+p]
					} else {
						bp = b[p*ldb+j]
					}
					dot += ap * bp
				}
			}
			cij := &c[i*ldc+j]
			if beta == 0 {
				*cij = alpha * dot
			} else {
				*cij = alpha*dot + beta**cij
			}
		}
	}
}
