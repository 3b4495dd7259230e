package cuda

import (
	"errors"
	"unsafe"
)

// Backend is what a Device needs from a CUDA driver. The real one (Open, built with -tags cuda)
// wraps gorgonia.org/cu; cuda/internal/shim (-tags cudashim) runs the same kernels on the CPU; tests
// use a fake. Addresses are device addresses as integers; host memory is passed as unsafe.Pointer
// plus a byte count. Work is ordered as on one CUDA stream: copies and launches run in issue order,
// and CopyDtoH returns once the data is on the host.
type Backend interface {
	Name() string
	Alloc(bytes int) (uintptr, error)
	Free(ptr uintptr) error
	Zero(ptr uintptr, bytes int) error
	CopyHtoD(dst uintptr, src unsafe.Pointer, bytes int) error
	CopyDtoH(dst unsafe.Pointer, src uintptr, bytes int) error
	CopyDtoD(dst, src uintptr, bytes int) error
	// Launch runs a kernel of the embedded PTX by name; args holds one 8-byte slot per parameter
	// (see args in launch.go).
	Launch(name string, grid, block [3]int, sharedBytes int, args []uint64) error
	Sync() error
	// OptInShared lets kernel name be launched with up to bytes of dynamic shared memory, more than
	// the 48 KiB a block gets by default (cuFuncSetAttribute with
	// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES on a GPU), or says why it cannot.
	OptInShared(name string, bytes int) error
}

// maxOptInShared is the most dynamic shared memory a block can opt in to on an A100, H100 or H200
// (227 KiB; the shim and the recorder hold to it too).
const maxOptInShared = 227 << 10

// Gemmer is implemented by backends with a vendor GEMM (cuBLAS). Without it MatMul runs the
// hg_sgemm kernel.
type Gemmer interface {
	Sgemm(g Gemm) error
}

// Gemm is one strided-batched row-major SGEMM: for z < Batch,
// C_z = Alpha·op(A_z)·op(B_z) + Beta·C_z with op(A) M×K and op(B) K×N, X_z at X + z·StrideX
// elements (a stride of 0 broadcasts the operand). Lda is the row length of A as stored (K, or M
// with TransA); likewise Ldb and Ldc.
type Gemm struct {
	TransA, TransB            bool
	M, N, K                   int
	Alpha, Beta               float32
	A, B, C                   uintptr
	Lda, Ldb, Ldc             int
	StrideA, StrideB, StrideC int
	Batch                     int
	// TF32 allows tensor-core TF32 products (inputs rounded to a 10-bit mantissa, FP32 sums), BF16
	// BF16 products (inputs rounded to a 7-bit mantissa, FP32 sums; cuBLAS's
	// CUBLAS_COMPUTE_32F_FAST_16BF); a Gemmer without tensor cores, and hg_sgemm, compute in FP32
	// regardless.
	TF32, BF16 bool
}

// ColumnMajor returns the column-major GEMM that computes g (the transpose trick: a row-major
// matrix is its transpose in column-major order, and Cᵀ = op(B)ᵀ·op(A)ᵀ). The result's A and B are
// g's B and A; the transposition flags and leading dimensions carry over unchanged, and M and N
// swap. cuBLAS receives exactly these arguments.
func (g Gemm) ColumnMajor() Gemm {
	c := g
	c.TransA, c.TransB = g.TransB, g.TransA
	c.M, c.N = g.N, g.M
	c.A, c.B = g.B, g.A
	c.Lda, c.Ldb = g.Ldb, g.Lda
	c.StrideA, c.StrideB = g.StrideB, g.StrideA
	return c
}

// AsyncUploader is implemented by backends that copy to the device from page-locked (pinned) host
// memory without the host waiting for the stream: on a GPU cuMemHostAlloc, cuMemcpyHtoDAsync on
// the stream and an event after the copy (Backend.CopyHtoD, from pageable Go memory, waits for the
// stream). Device.NewStager builds a double-buffered upload on it.
type AsyncUploader interface {
	// AllocPinned returns bytes (> 0) of page-locked host memory.
	AllocPinned(bytes int) (unsafe.Pointer, error)
	// FreePinned releases memory of AllocPinned; no copy from it may be pending (wait for its
	// fence first).
	FreePinned(p unsafe.Pointer) error
	// CopyHtoDAsync enqueues the copy of bytes from pinned memory src to dst, ordered with the
	// stream's other work, and returns at once: src must not be written until a fence recorded
	// after the copy has been passed.
	CopyHtoDAsync(dst uintptr, src unsafe.Pointer, bytes int) error
	// NewFence returns a fence on the stream (a CUDA event without timing).
	NewFence() (Fence, error)
}

// Fence is a point in the stream's work (a CUDA event).
type Fence interface {
	// Record places the fence after the work issued so far.
	Record() error
	// Wait returns once the stream has run past the fence: a host synchronisation, unless the
	// stream is already past it.
	Wait() error
	// Free releases the fence.
	Free() error
}

// Timer is implemented by backends that can time device work (CUDA events on a GPU).
type Timer interface {
	// Time runs f once between two events and returns the device time in seconds.
	Time(f func() error) (float64, error)
	// FlushL2 evicts the L2 cache (by writing a buffer larger than it) so that the next timed
	// run reads from DRAM.
	FlushL2() error
	// PeakBandwidth is the device's DRAM bandwidth in bytes/s, from a table of known parts or the
	// memory clock and bus width; 0 if unknown.
	PeakBandwidth() float64
}

// ErrNotBuilt is returned by Open in a binary built without -tags cuda.
var ErrNotBuilt = errors.New("cuda: this binary was built without CUDA support; rebuild with 'go build -tags cuda' (needs the CUDA toolkit, see kernels/install-cuda.sh)")

// ErrNoDevice is returned by Open when the driver finds no usable GPU.
var ErrNoDevice = errors.New("cuda: no CUDA GPU found")
