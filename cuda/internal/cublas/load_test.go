//go:build cuda || cublasdl

package cublas

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

// fakeSource is a stand-in cuBLAS: the functions the loader binds, cublasGetProperty answering
// MAJOR.MINOR.PATCH (so a test can tell which file loaded) and a plain column-major
// cublasSgemmStridedBatched on host memory (so the argument marshalling of Handle.Sgemm is
// checked; property 99 answers the last math mode). -DBROKEN leaves cublasSgemmStridedBatched out.
const fakeSource = `
static int mode = -1; /* the last math mode, answered as property 99 */
int cublasGetProperty(int which, int* v) { *v = which == 0 ? MAJOR : which == 1 ? MINOR : which == 2 ? PATCH : mode; return 0; }
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
#endif
`

// fake builds a fake cuBLAS with gcc at dir/name reporting version major.minor.patch.
func fake(t *testing.T, dir, name string, major, minor, patch int, broken bool) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the loader test builds its fake libraries with gcc")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "fake.c")
	if err := os.WriteFile(src, []byte(fakeSource), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args := []string{"-shared", "-fPIC", "-O1", "-o", out, src,
		fmt.Sprintf("-DMAJOR=%d", major), fmt.Sprintf("-DMINOR=%d", minor), fmt.Sprintf("-DPATCH=%d", patch)}
	if broken {
		args = append(args, "-DBROKEN")
	}
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, b)
	}
	return out
}

func load(t *testing.T, s Search) *Library {
	t.Helper()
	lib, err := Load(s)
	if err != nil {
		t.Fatalf("Load(%v): %v", s.Candidates(), err)
	}
	t.Cleanup(lib.Close)
	return lib
}

// $HOLDGO_CUBLAS comes first; then libcublas.so.13, .12, .11, each searched in every folder before
// the next major version.
func TestLoadOrder(t *testing.T) {
	root := t.TempDir()
	d1, d2, env := filepath.Join(root, "d1"), filepath.Join(root, "d2"), filepath.Join(root, "env")
	fake(t, d1, "libcublas.so.11", 11, 0, 1, false)
	fake(t, d1, "libcublas.so.12", 12, 0, 1, false)
	fake(t, d2, "libcublas.so.13", 13, 0, 2, false)
	explicit := fake(t, env, "libmine.so", 12, 7, 3, false)
	names := []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

	for _, c := range []struct {
		name string
		s    Search
		want string // version
		path string
	}{
		{"env first", Search{Env: explicit, Names: names, Dirs: []string{d1, d2}}, "12.7.3", explicit},
		{".13 in the second folder before .12 in the first", Search{Names: names, Dirs: []string{d1, d2}}, "13.0.2", filepath.Join(d2, "libcublas.so.13")},
		{".12 before .11", Search{Names: names, Dirs: []string{d1}}, "12.0.1", filepath.Join(d1, "libcublas.so.12")},
		{".11 last", Search{Names: names[2:], Dirs: []string{d1, d2}}, "11.0.1", filepath.Join(d1, "libcublas.so.11")},
		{"missing env falls through", Search{Env: filepath.Join(root, "nope.so"), Names: names, Dirs: []string{d1}}, "12.0.1", filepath.Join(d1, "libcublas.so.12")},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib := load(t, c.s)
			if lib.Version() != c.want || lib.Path != c.path {
				t.Errorf("loaded %s %s, want %s %s", lib.Path, lib.Version(), c.path, c.want)
			}
		})
	}
}

// No usable library: a missing file, a file that is not a shared library and a library without
// one of the functions are each reported, in order, in the one error.
func TestLoadNothingUsable(t *testing.T) {
	root := t.TempDir()
	broken := fake(t, filepath.Join(root, "a"), "libcublas.so.13", 13, 0, 0, true)
	junk := filepath.Join(root, "a", "libcublas.so.12")
	if err := os.WriteFile(junk, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(root, "missing", "libcublas.so")
	s := Search{Env: env, Names: Names, Dirs: []string{filepath.Join(root, "a")}}
	lib, err := Load(s)
	if err == nil {
		lib.Close()
		t.Fatalf("Load loaded %s", lib.Path)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("error %T %v, want *LoadError", err, err)
	}
	want := []string{env, broken, junk, filepath.Join(root, "a", "libcublas.so.11")}
	if len(le.Tried) != len(want) {
		t.Fatalf("tried %v, want %v", le.Tried, want)
	}
	for i, a := range le.Tried {
		if a.Path != want[i] {
			t.Errorf("attempt %d: %s, want %s", i, a.Path, want[i])
		}
	}
	msg := err.Error()
	for _, part := range []string{env, broken, junk, "not found", "no symbol cublasSgemmStridedBatched", "dlopen", EnvVar} {
		if !strings.Contains(msg, part) {
			t.Errorf("error lacks %q:\n%s", part, msg)
		}
	}
	t.Log(msg)
}

// Handle.Sgemm passes every argument through in cuBLAS's order (checked by the fake's own GEMM on
// host memory), selects TF32 or strict FP32 math, and clamps leading dimensions of an empty
// product to 1 as cuBLAS demands.
func TestHandleSgemm(t *testing.T) {
	lib := load(t, Search{Env: fake(t, t.TempDir(), "libcublas.so.12", 12, 1, 0, false)})
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
