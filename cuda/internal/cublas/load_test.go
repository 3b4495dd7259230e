//go:build cuda || dynlib

package cublas

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"holdgo/cuda/internal/dynlib"
	"holdgo/cuda/internal/dynlib/dynlibtest"
)

// fakeSource is a stand-in cuBLAS: the functions the loader binds, cublasGetProperty answering
// MAJOR.MINOR.PATCH (so a test can tell which file loaded) and a plain column-major
// cublasSgemmStridedBatched on host memory (so the argument marshalling of Handle.Sgemm is
// checked; property 99 answers the last math mode), and cublasGemmStridedBatchedEx on the same GEMM
// for FP32 matrices only (property 98 answers its last compute type and algorithm, 1000·type + 500
// + algo, and −1 if it refused the data types). -DBROKEN leaves both GEMMs out;
// -DLT makes it call cublasLtGetVersion, so that it needs a libcublasLt, as the real one does.
const fakeSource = `
#ifdef LT
int cublasLtGetVersion(void);
int fake_lt_version(void) { return cublasLtGetVersion(); }
#endif
static int mode = -1; /* the last math mode, answered as property 99 */
static int ex = 0; /* the last GemmEx's compute type and algorithm, property 98 */
int cublasGetProperty(int which, int* v) { *v = which == 0 ? MAJOR : which == 1 ? MINOR : which == 2 ? PATCH : which == 98 ? ex : mode; return 0; }
int cublasCreate_v2(void** h) { static int x; *h = &x; return 0; }
int cublasDestroy_v2(void* h) { return 0; }
int cublasSetStream_v2(void* h, void* s) { return s == (void*)0 ? 0 : 13; }
int cublasSetMathMode(void* h, int m) { mode = m; return 0; }
#ifndef BROKEN
int cublasSgemmStridedBatched(void* h, int ta, int tb, int m, int n, int k, const float* alpha,
		const float* A, int lda, long long sa, const float* B, int ldb, long long sb, const float* beta,
		float* C, int ldc, long long sc, int batch) {
	if (lda < 1 || ldb < 1 || ldc < 1) return 7; /* as cuBLAS: invalid value */
	for (int p = 0; p < batch; p++)
		for (int j = 0; j < n; j++)
			for (int i = 0; i < m; i++) {
				float s = 0;
				for (int l = 0; l < k; l++) {
					float a = ta ? A[p*sa + l + i*lda] : A[p*sa + i + l*lda];
					float b = tb ? B[p*sb + j + l*ldb] : B[p*sb + l + j*ldb];
					s += a * b;
				}
				float* c = &C[p*sc + i + j*ldc];
				*c = *alpha * s + *beta * *c;
			}
	return 0;
}
int cublasGemmStridedBatchedEx(void* h, int ta, int tb, int m, int n, int k, const void* alpha,
		const void* A, int at, int lda, long long sa, const void* B, int bt, int ldb, long long sb, const void* beta,
		void* C, int ct, int ldc, long long sc, int batch, int compute, int algo) {
	if (at != 0 || bt != 0 || ct != 0) { ex = -1; return 7; } /* CUDA_R_32F only */
	ex = 1000 * compute + 500 + algo;
	return cublasSgemmStridedBatched(h, ta, tb, m, n, k, (const float*)alpha, (const float*)A, lda, sa,
		(const float*)B, ldb, sb, (const float*)beta, (float*)C, ldc, sc, batch);
}
#endif
`

// cuBLAS's table binds from a fake named by $HOLDGO_CUBLAS (dynlib.Search.Env) and its version
// reads; a libcublas.so.N that needs the libcublasLt.so.N beside it loads (Load preloads it); a
// library without cublasSgemmStridedBatched is refused by name; when nothing loads, the error names
// every path tried and how to get cuBLAS. (The search's order and fall-through are dynlib's, tested
// there.)
func TestLoad(t *testing.T) {
	root := t.TempDir()
	mine := dynlibtest.Library(t, fakeSource, filepath.Join(root, "env"), "libmine.so", "-DMAJOR=12", "-DMINOR=7", "-DPATCH=3")
	lib, err := Load(dynlib.Search{Env: mine, Names: Names})
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != mine || lib.Version() != "12.7.3" {
		t.Errorf("loaded %s %s, want %s 12.7.3", lib.Path, lib.Version(), mine)
	}
	lib.Close()

	withLt := filepath.Join(root, "lt")
	dynlibtest.Library(t, "int cublasLtGetVersion(void) { return 120103; }\n", withLt, "libcublasLt.so.12", "-Wl,-soname,libcublasLt.so.12")
	dynlibtest.Library(t, fakeSource, withLt, "libcublas.so.12", "-DMAJOR=12", "-DMINOR=1", "-DPATCH=3", "-DLT", "-L"+withLt, "-l:libcublasLt.so.12")
	if lib, err = Load(dynlib.Search{Names: Names, Dirs: []string{withLt}}); err != nil {
		t.Fatalf("libcublas.so.12 beside its libcublasLt.so.12: %v", err)
	}
	if lib.Path != filepath.Join(withLt, "libcublas.so.12") || lib.Version() != "12.1.3" {
		t.Errorf("loaded %s %s, want the libcublas.so.12 beside its libcublasLt, 12.1.3", lib.Path, lib.Version())
	}
	lib.Close()

	broken := dynlibtest.Library(t, fakeSource, root, "libcublas.so.13", "-DMAJOR=13", "-DMINOR=0", "-DPATCH=0", "-DBROKEN")
	missing := filepath.Join(root, "none", "libcublas.so")
	_, err = Load(dynlib.Search{Env: missing, Names: Names[:1], Dirs: []string{root}})
	dynlibtest.ErrorContains(t, err, "no usable cuBLAS (tried 2 paths", missing+": not found", broken+": not a usable cuBLAS: no symbol cublasSgemmStridedBatched",
		"); install cuBLAS 11, 12 or 13 (e.g. pip install nvidia-cublas-cu12) or set HOLDGO_CUBLAS to the path of libcublas.so.N")
}

// Handle.Sgemm passes every argument through in cuBLAS's order (checked by the fake's own GEMM on
// host memory), selects TF32, BF16 or strict FP32 math, and clamps leading dimensions of an empty
// product to 1 as cuBLAS demands.
func TestHandleSgemm(t *testing.T) {
	lib, err := Load(dynlib.Search{Env: dynlibtest.Library(t, fakeSource, t.TempDir(), "libcublas.so.12", "-DMAJOR=12", "-DMINOR=1", "-DPATCH=0")})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	h, err := lib.NewHandle(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	// Two batches of C (2×2) = Aᵀ·B with A stored 3×2 (lda 3) and B 3×2 (ldb 3), column-major.
	a := []float32{1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}
	b := []float32{1, 1, 1, 0, 1, 2, 2, 0, 0, 0, 0, 3}
	c := []float32{1, 1, 1, 1, 0, 0, 0, 0}
	g := Gemm{TF32: true, TransA: true, M: 2, N: 2, K: 3, Alpha: 2, Beta: 1, A: addr(a), Lda: 3, StrideA: 6,
		B: addr(b), Ldb: 3, StrideB: 6, C: addr(c), Ldc: 2, StrideC: 4, Batch: 2}
	if err := h.Sgemm(g); err != nil {
		t.Fatal(err)
	}
	want := []float32{13, 31, 17, 35, 4, 0, 0, 0}
	for i := range want {
		if c[i] != want[i] {
			t.Fatalf("C = %v, want %v", c, want)
		}
	}
	if got := fakeMode(t, lib); got != 3 {
		t.Errorf("TF32 GEMM set math mode %d, want 3 (CUBLAS_TF32_TENSOR_OP_MATH)", got)
	}
	// BF16: the same GEMM through cublasGemmStridedBatchedEx on FP32 matrices, compute type
	// CUBLAS_COMPUTE_32F_FAST_16BF (75), algorithm CUBLAS_GEMM_DEFAULT (−1), default math mode.
	c2 := []float32{1, 1, 1, 1, 0, 0, 0, 0}
	g.TF32, g.BF16, g.C = true, true, addr(c2)
	if err := h.Sgemm(g); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if c2[i] != want[i] {
			t.Fatalf("BF16: C = %v, want %v", c2, want)
		}
	}
	if got, err := lib.property(98); err != nil || got != 75*1000+500-1 {
		t.Errorf("BF16 GEMM: compute type and algorithm %d (%v), want 75 and -1 (74499)", got, err)
	}
	if got := fakeMode(t, lib); got != 0 {
		t.Errorf("BF16 GEMM set math mode %d, want 0", got)
	}
	runtime.KeepAlive(c2)
	// k = 0 with zero leading dimensions: C = β·C, no status 7.
	if err := h.Sgemm(Gemm{M: 2, N: 2, K: 0, Alpha: 1, Beta: 0.5, C: addr(c), Ldc: 2, Batch: 1}); err != nil {
		t.Fatalf("empty product: %v", err)
	}
	if c[0] != 6.5 || c[3] != 17.5 {
		t.Errorf("β·C: %v", c[:4])
	}
	if got := fakeMode(t, lib); got != 0 {
		t.Errorf("strict GEMM set math mode %d, want 0", got)
	}
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	runtime.KeepAlive(c)
	if _, err := lib.NewHandle(unsafe.Pointer(&a[0])); err == nil || !strings.Contains(err.Error(), "status 13") {
		t.Errorf("a failing cublasSetStream gave %v", err)
	}
}

// fakeMode is the math mode the fake last received.
func fakeMode(t *testing.T, lib *Library) int {
	t.Helper()
	m, err := lib.property(99)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func addr(x []float32) uintptr { return uintptr(unsafe.Pointer(&x[0])) }
