package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestIndependentFloat64 checks Sgemm on every level, and SgemmRef, the
// other tests' oracle, against a float64 triple loop written here: under
// -tags noasm the generic kernel would otherwise only meet SgemmRef, and a
// shared slip (alpha, beta, a transpose) would go unseen. A float32 dot
// product of length k is within (k+2)·2^-24·(|α|·Σ|a·b| + |β·c|) of the exact
// value; shapes straddle the generic tile (2×4) and the skinny path.
func TestIndependentFloat64(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	prev := ISA()
	defer SetISA(prev)
	for _, sh := range [][3]int{{1, 1, 1}, {3, 5, 7}, {2, 4, 9}, {17, 3, 33}, {5, 19, 2}, {40, 37, 65}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, ab := range [][2]float32{{1, 0}, {-0.75, 0.5}} {
					alpha, beta := ab[0], ab[1]
					a, b, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
					for _, s := range [][]float32{a, b, c} {
						for i := range s {
							s[i] = float32(rng.NormFloat64())
						}
					}
					lda, ldb := k, n
					if ta {
						lda = m
					}
					if tb {
						ldb = k
					}
					at := func(i, p int) float64 { // op(A)[i][p]
						if ta {
							return float64(a[p*lda+i])
						}
						return float64(a[i*lda+p])
					}
					bt := func(p, j int) float64 {
						if tb {
							return float64(b[j*ldb+p])
						}
						return float64(b[p*ldb+j])
					}
					want, bound := make([]float64, m*n), make([]float64, m*n)
					for i := range m {
						for j := range n {
							var s, abs float64
							for p := range k {
								s += at(i, p) * bt(p, j)
								abs += math.Abs(at(i, p) * bt(p, j))
							}
							want[i*n+j] = float64(alpha)*s + float64(beta)*float64(c[i*n+j])
							bound[i*n+j] = float64(k+2) * 0x1p-24 * (math.Abs(float64(alpha))*abs + math.Abs(float64(beta)*float64(c[i*n+j])))
						}
					}
					run := map[string]func(dst []float32){
						"SgemmRef": func(dst []float32) { SgemmRef(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, dst, n) },
					}
					for _, level := range Levels() {
						run[level] = func(dst []float32) {
							if _, err := SetISA(level); err != nil {
								t.Fatal(err)
							}
							Sgemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, dst, n)
						}
					}
					for name, f := range run {
						got := append([]float32(nil), c...)
						f(got)
						for i, w := range want {
							if err := math.Abs(float64(got[i]) - w); !(err <= bound[i]+1e-30) {
								t.Fatalf("%s %s: C[%d] = %.9g, float64 %.9g (error %.3g, bound %.3g)", name,
									fmt.Sprintf("tA=%v tB=%v %d×%d×%d α=%g β=%g", ta, tb, m, n, k, alpha, beta), i, got[i], w, err, bound[i])
							}
						}
					}
				}
			}
		}
	}
}
