//go:build cuda || dynlib

package cublas

/*
#include <stddef.h>
#include <stdint.h>

// The cuBLAS ABI used here, declared without cublas_v2.h so that this file builds without the CUDA
// toolkit: statuses and enums are C ints (CUBLAS_STATUS_SUCCESS = 0, CUBLAS_OP_N/T = 0/1,
// CUBLAS_DEFAULT_MATH = 0, CUBLAS_TF32_TENSOR_OP_MATH = 3, MAJOR/MINOR/PATCH_LEVEL = 0/1/2), the
// handle an opaque pointer; for cublasGemmStridedBatchedEx CUDA_R_32F = 0,
// CUBLAS_COMPUTE_32F_FAST_16BF = 75 and CUBLAS_GEMM_DEFAULT = -1. These values are the same in
// cuBLAS 11, 12 and 13.
typedef void* hg_handle;

// hg_cublas is the table of cuBLAS's functions, bound by dynlib (symbols, below).
typedef struct {
	int (*create)(hg_handle*);
	int (*destroy)(hg_handle);
	int (*set_stream)(hg_handle, void*);
	int (*set_math_mode)(hg_handle, int);
	int (*get_property)(int, int*);
	int (*sgemm_strided_batched)(hg_handle, int, int, int, int, int, const float*, const float*, int, long long,
		const float*, int, long long, const float*, float*, int, long long, int);
	int (*gemm_strided_batched_ex)(hg_handle, int, int, int, int, int, const void*, const void*, int, int, long long,
		const void*, int, int, long long, const void*, void*, int, int, long long, int, int, int);
} hg_cublas;

static int hg_property(hg_cublas* t, int which, int* v) { return t->get_property(which, v); }

static int hg_create(hg_cublas* t, hg_handle* h, void* stream) {
	int s = t->create(h);
	if (s != 0) return s;
	return t->set_stream(*h, stream);
}

static int hg_destroy(hg_cublas* t, hg_handle h) { return t->destroy(h); }

// hg_sgemm: device addresses cross as integers; the casts live here, in C. math selects strict
// FP32 (0), TF32 tensor-core math (1: inputs rounded to a 10-bit mantissa, FP32 accumulation) or
// BF16 (2: cublasGemmStridedBatchedEx on FP32 matrices with CUBLAS_COMPUTE_32F_FAST_16BF, inputs
// down-converted to BF16, FP32 accumulation).
static int hg_sgemm(hg_cublas* t, hg_handle h, int math, int ta, int tb, int m, int n, int k, float alpha,
		uintptr_t a, int lda, long long sa, uintptr_t b, int ldb, long long sb, float beta,
		uintptr_t c, int ldc, long long sc, int batch) {
	int s = t->set_math_mode(h, math == 1 ? 3 : 0);
	if (s != 0) return s;
	// cuBLAS rejects a leading dimension below 1 (status 7) even where a zero-length side makes
	// it meaningless: a product with k = 0, whose result is beta·C.
	if (lda < 1) lda = 1;
	if (ldb < 1) ldb = 1;
	if (ldc < 1) ldc = 1;
	if (math == 2)
		return t->gemm_strided_batched_ex(h, ta, tb, m, n, k, &alpha, (const void*)a, 0, lda, sa, (const void*)b, 0, ldb, sb,
			&beta, (void*)c, 0, ldc, sc, batch, 75, -1);
	return t->sgemm_strided_batched(h, ta, tb, m, n, k, &alpha, (const float*)a, lda, sa,
		(const float*)b, ldb, sb, &beta, (float*)c, ldc, sc, batch);
}
*/
import "C"

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"holdgo/cuda/internal/dynlib"
)

// Library is a loaded cuBLAS.
type Library struct {
	Path                string // the candidate that loaded
	Major, Minor, Patch int    // cublasGetProperty
	dl                  *dynlib.Lib
	t                   *C.hg_cublas
}

// Load tries the candidates of s in order and returns the first library that opens and exports
// every function the backend calls, or a *dynlib.LoadError listing every path tried and why it
// failed.
func Load(s dynlib.Search) (*Library, error) { return dynlib.Load(spec, s, open) }

// open binds cuBLAS's functions from path, after preloading the libcublasLt beside it (ltPath), and
// reads its version.
func open(path string) (*Library, error) {
	t := new(C.hg_cublas)
	dl, err := spec.Open(path, symbols(t), ltPath(path))
	if err != nil {
		return nil, err
	}
	lib := &Library{Path: path, dl: dl, t: t}
	for i, v := range []*int{&lib.Major, &lib.Minor, &lib.Patch} {
		x, err := lib.property(i)
		if err != nil {
			lib.Close()
			return nil, err
		}
		*v = x
	}
	return lib, nil
}

// symbols is cuBLAS's symbol table: each function the backend calls (the _v2 name, or the older
// one), and its place in t.
func symbols(t *C.hg_cublas) []dynlib.Symbol {
	return []dynlib.Symbol{
		{Name: "cublasCreate_v2", Alt: "cublasCreate", Addr: unsafe.Pointer(&t.create)},
		{Name: "cublasDestroy_v2", Alt: "cublasDestroy", Addr: unsafe.Pointer(&t.destroy)},
		{Name: "cublasSetStream_v2", Alt: "cublasSetStream", Addr: unsafe.Pointer(&t.set_stream)},
		{Name: "cublasSetMathMode", Addr: unsafe.Pointer(&t.set_math_mode)},
		{Name: "cublasGetProperty", Addr: unsafe.Pointer(&t.get_property)},
		{Name: "cublasSgemmStridedBatched", Addr: unsafe.Pointer(&t.sgemm_strided_batched)},
		{Name: "cublasGemmStridedBatchedEx", Addr: unsafe.Pointer(&t.gemm_strided_batched_ex)},
	}
}

// property is cublasGetProperty(which): 0 major, 1 minor, 2 patch level.
func (l *Library) property(which int) (int, error) {
	var x C.int
	if s := C.hg_property(l.t, C.int(which), &x); s != 0 {
		return 0, fmt.Errorf("cublasGetProperty(%d): status %d", which, int(s))
	}
	return int(x), nil
}

// ltPath is libcublasLt.so.N next to a libcublas.so.N given by its path, when that file exists:
// the NVIDIA toolkit's and the Python wheels' libcublas find their libcublasLt only through
// LD_LIBRARY_PATH or the ld.so cache, so Load preloads it.
func ltPath(path string) string {
	dir, base := filepath.Split(path)
	if dir == "" || !strings.HasPrefix(base, "libcublas.so") {
		return ""
	}
	lt := filepath.Join(dir, "libcublasLt"+strings.TrimPrefix(base, "libcublas"))
	if _, err := os.Stat(lt); err != nil {
		return ""
	}
	return lt
}

// Version is "major.minor.patch".
func (l *Library) Version() string { return fmt.Sprintf("%d.%d.%d", l.Major, l.Minor, l.Patch) }

// Close unloads the library; handles made from it must be destroyed first.
func (l *Library) Close() {
	if l.dl != nil {
		l.dl.Close()
		l.dl, l.t = nil, nil
	}
}

// Handle is a cuBLAS handle bound to one stream.
type Handle struct {
	lib *Library
	h   C.hg_handle
}

// NewHandle creates a handle whose work goes to stream (a CUstream; nil for the default stream).
func (l *Library) NewHandle(stream unsafe.Pointer) (*Handle, error) {
	h := &Handle{lib: l}
	if s := C.hg_create(l.t, &h.h, stream); s != 0 {
		return nil, fmt.Errorf("cublasCreate/cublasSetStream (%s): status %d", l.Path, int(s))
	}
	return h, nil
}

// Destroy releases the handle.
func (h *Handle) Destroy() error {
	if s := C.hg_destroy(h.lib.t, h.h); s != 0 {
		return fmt.Errorf("cublasDestroy: status %d", int(s))
	}
	return nil
}

// Gemm is one column-major cublasSgemmStridedBatched call: C = α·op(A)·op(B) + β·C for each of
// Batch matrices, the addresses in device memory.
type Gemm struct {
	TF32, BF16, TransA, TransB bool // BF16 wins over TF32
	M, N, K                    int
	Alpha, Beta                float32
	A, B, C                    uintptr
	Lda, Ldb, Ldc              int
	StrideA, StrideB, StrideC  int64
	Batch                      int
}

// Sgemm runs g on the handle's stream.
func (h *Handle) Sgemm(g Gemm) error {
	math := cbool(g.TF32)
	if g.BF16 {
		math = 2
	}
	s := C.hg_sgemm(h.lib.t, h.h, math, cbool(g.TransA), cbool(g.TransB), C.int(g.M), C.int(g.N), C.int(g.K), C.float(g.Alpha),
		C.uintptr_t(g.A), C.int(g.Lda), C.longlong(g.StrideA), C.uintptr_t(g.B), C.int(g.Ldb), C.longlong(g.StrideB),
		C.float(g.Beta), C.uintptr_t(g.C), C.int(g.Ldc), C.longlong(g.StrideC), C.int(g.Batch))
	if s != 0 && g.BF16 {
		return fmt.Errorf("cublasGemmStridedBatchedEx (CUBLAS_COMPUTE_32F_FAST_16BF): status %d", int(s))
	}
	if s != 0 {
		return fmt.Errorf("cublasSgemmStridedBatched: status %d", int(s))
	}
	return nil
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
