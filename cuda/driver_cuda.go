//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcublas -lcuda
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <cuda.h>
#include <cublas_v2.h>

// gorgonia.org/cu v0.9.6 calls cuInit in its package init and exits the process when it fails, so
// a -tags cuda binary would die on a machine without a GPU before main runs. This definition of
// cuInit interposes on the driver's (the executable's symbol wins over libcuda.so's): it calls the
// real cuInit, remembers the result for Open to report, and lets the package init carry on.
static CUresult hg_init_result = CUDA_SUCCESS;
static int hg_init_done = 0;

CUresult cuInit(unsigned int flags) {
	if (!hg_init_done) {
		CUresult (*real)(unsigned int) = (CUresult (*)(unsigned int))dlsym(RTLD_NEXT, "cuInit");
		hg_init_result = real ? real(flags) : CUDA_ERROR_NOT_INITIALIZED;
		hg_init_done = 1;
	}
	return CUDA_SUCCESS;
}

static int hg_cu_init_result(void) { return (int)hg_init_result; }

static const char* hg_cu_error_name(int r) {
	const char* s = 0;
	cuGetErrorString((CUresult)r, &s);
	return s ? s : "unknown CUDA error";
}

// Device addresses cross as integers; the casts live here, in C. tf32 selects cuBLAS's TF32
// tensor-core math (inputs rounded to a 10-bit mantissa, FP32 accumulation) or strict FP32.
static cublasStatus_t hg_cublas_sgemm(cublasHandle_t h, int tf32, int ta, int tb, int m, int n, int k, float alpha,
		uintptr_t a, int lda, long long sa, uintptr_t b, int ldb, long long sb, float beta,
		uintptr_t c, int ldc, long long sc, int batch) {
	cublasStatus_t s = cublasSetMathMode(h, tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
	if (s != CUBLAS_STATUS_SUCCESS) return s;
	// cuBLAS rejects a leading dimension below 1 (status 7) even where a zero-length side makes
	// it meaningless: a product with k = 0, whose result is beta·C (zeros here).
	if (lda < 1) lda = 1;
	if (ldb < 1) ldb = 1;
	if (ldc < 1) ldc = 1;
	return cublasSgemmStridedBatched(h, ta ? CUBLAS_OP_T : CUBLAS_OP_N, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
		m, n, k, &alpha, (const float*)a, lda, sa, (const float*)b, ldb, sb, &beta, (float*)c, ldc, sc, batch);
}

static cublasStatus_t hg_cublas_create(cublasHandle_t* h, void* stream) {
	cublasStatus_t s = cublasCreate(h);
	if (s != CUBLAS_STATUS_SUCCESS) return s;
	return cublasSetStream(*h, (cudaStream_t)stream);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"strings"
	"unsafe"

	"gorgonia.org/cu"

	"holdgo/kernels"
)

// driver is the Backend on a real GPU: one primary context, one stream (blocking, so that it is
// ordered with the synchronous copies), the embedded PTX loaded once, and a cuBLAS handle bound to
// the stream. Every call runs with the context current on a locked OS thread.
type driver struct {
	name   string
	dev    cu.Device
	ctx    cu.CUContext
	stream cu.Stream
	funcs  map[string]cu.Function
	blas   C.cublasHandle_t
	arch   int
	peak   float64
	l2     int
	flush  cu.DevicePtr
}

// Open returns a Device on GPU ordinal (0 for the first), or an error that says why not:
// ErrNoDevice when the driver finds no GPU, and the driver's message for anything else.
func Open(ordinal int) (*Device, error) {
	if r := C.hg_cu_init_result(); r != 0 {
		msg := C.GoString(C.hg_cu_error_name(r))
		if r == C.CUDA_ERROR_NO_DEVICE {
			return nil, fmt.Errorf("%w (cuInit: %s)", ErrNoDevice, msg)
		}
		return nil, fmt.Errorf("cuda: the CUDA driver did not initialise (cuInit: %s); is the NVIDIA driver loaded?", msg)
	}
	n, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("cuda: count devices: %w", err)
	}
	if n == 0 {
		return nil, ErrNoDevice
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d requested, %d present", ordinal, n)
	}
	d := &driver{funcs: map[string]cu.Function{}}
	if err := d.open(ordinal); err != nil {
		return nil, err
	}
	return NewDevice(d), nil
}

func (d *driver) open(ordinal int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var err error
	if d.dev, err = cu.GetDevice(ordinal); err != nil {
		return fmt.Errorf("cuda: device %d: %w", ordinal, err)
	}
	if d.name, err = d.dev.Name(); err != nil {
		return fmt.Errorf("cuda: device %d name: %w", ordinal, err)
	}
	attr := func(a cu.DeviceAttribute) int { v, _ := d.dev.Attribute(a); return v }
	capability := 10*attr(cu.ComputeCapabilityMajor) + attr(cu.ComputeCapabilityMinor)
	if d.arch, err = kernels.ArchFor(capability); err != nil {
		return fmt.Errorf("cuda: %s: %w", d.name, err)
	}
	d.l2 = attr(cu.L2CacheSize)
	d.peak = peakBandwidth(d.name, attr(cu.MemoryClockRate), attr(cu.GlobalMemoryBusWidth))
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return fmt.Errorf("cuda: %s: retain context: %w", d.name, err)
	}
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return fmt.Errorf("cuda: %s: set context: %w", d.name, err)
	}
	if d.stream, err = cu.MakeStream(cu.DefaultStream); err != nil {
		return fmt.Errorf("cuda: %s: create stream: %w", d.name, err)
	}
	mods, err := kernels.PTX(d.arch)
	if err != nil {
		return err
	}
	for fam, ptx := range mods {
		m, err := cu.LoadData(ptx)
		if err != nil {
			return fmt.Errorf("cuda: load %s.ptx (sm_%d) on %s: %w", fam, d.arch, d.name, err)
		}
		for _, name := range kernels.Entries(ptx) {
			if d.funcs[name], err = m.Function(name); err != nil {
				return fmt.Errorf("cuda: %s.ptx: kernel %s: %w", fam, name, err)
			}
		}
	}
	if s := C.hg_cublas_create(&d.blas, unsafe.Pointer(d.stream.C())); s != C.CUBLAS_STATUS_SUCCESS {
		return fmt.Errorf("cuda: cuBLAS init: status %d", int(s))
	}
	return nil
}

// peakBandwidth is the DRAM bandwidth in bytes/s: the datasheet value for known parts, else
// 2 (DDR) × memory clock × bus width.
func peakBandwidth(name string, clockKHz, busBits int) float64 {
	for _, p := range []struct {
		part string
		bw   float64
	}{{"H200", 4.8e12}, {"H100", 3.35e12}, {"A100", 2.0e12}} {
		if strings.Contains(name, p.part) {
			return p.bw
		}
	}
	return 2 * float64(clockKHz) * 1e3 * float64(busBits) / 8
}

// do runs f with the context current on this OS thread.
func (d *driver) do(f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return err
	}
	return f()
}

func (d *driver) Name() string { return "cuda" }

// DeviceName is the GPU's marketing name ("NVIDIA H100 80GB HBM3").
func (d *driver) DeviceName() string { return fmt.Sprintf("%s (sm_%d PTX)", d.name, d.arch) }

func (d *driver) Alloc(bytes int) (ptr uintptr, err error) {
	err = d.do(func() error {
		p, err := cu.MemAlloc(int64(bytes))
		ptr = uintptr(p)
		return err
	})
	return
}

func (d *driver) Free(ptr uintptr) error {
	return d.do(func() error { return cu.MemFree(cu.DevicePtr(ptr)) })
}

func (d *driver) Zero(ptr uintptr, bytes int) error {
	return d.do(func() error { return cu.MemsetD8Async(cu.DevicePtr(ptr), 0, int64(bytes), d.stream) })
}

func (d *driver) CopyHtoD(dst uintptr, src unsafe.Pointer, bytes int) error {
	// Synchronous: src is pageable Go memory that the caller may reuse on return.
	return d.do(func() error {
		if err := cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, int64(bytes), d.stream); err != nil {
			return err
		}
		return d.stream.Synchronize()
	})
}

func (d *driver) CopyDtoH(dst unsafe.Pointer, src uintptr, bytes int) error {
	return d.do(func() error {
		if err := cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), int64(bytes), d.stream); err != nil {
			return err
		}
		return d.stream.Synchronize()
	})
}

func (d *driver) CopyDtoD(dst, src uintptr, bytes int) error {
	return d.do(func() error { return cu.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), int64(bytes), d.stream) })
}

func (d *driver) Launch(name string, grid, block [3]int, sharedBytes int, args []uint64) error {
	fn, ok := d.funcs[name]
	if !ok {
		return fmt.Errorf("no kernel %q in the sm_%d PTX", name, d.arch)
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	return d.do(func() error {
		return fn.Launch(grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes, d.stream, params)
	})
}

func (d *driver) Sync() error { return d.do(d.stream.Synchronize) }

// Sgemm runs g on cuBLAS through the transpose trick (Gemm.ColumnMajor).
func (d *driver) Sgemm(g Gemm) error {
	c := g.ColumnMajor()
	return d.do(func() error {
		s := C.hg_cublas_sgemm(d.blas, cbool(c.TF32), cbool(c.TransA), cbool(c.TransB), C.int(c.M), C.int(c.N), C.int(c.K), C.float(c.Alpha),
			C.uintptr_t(c.A), C.int(c.Lda), C.longlong(c.StrideA), C.uintptr_t(c.B), C.int(c.Ldb), C.longlong(c.StrideB),
			C.float(c.Beta), C.uintptr_t(c.C), C.int(c.Ldc), C.longlong(c.StrideC), C.int(c.Batch))
		if s != C.CUBLAS_STATUS_SUCCESS {
			return fmt.Errorf("cublasSgemmStridedBatched: status %d", int(s))
		}
		return nil
	})
}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}

// Time runs f between two events on the stream and returns the elapsed device time in seconds.
func (d *driver) Time(f func() error) (float64, error) {
	var start, stop cu.Event
	if err := d.do(func() error {
		var err error
		if start, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return err
		}
		if stop, err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return err
		}
		return start.Record(d.stream)
	}); err != nil {
		return 0, err
	}
	defer d.do(func() error { cu.DestroyEvent(&start); return cu.DestroyEvent(&stop) })
	if err := f(); err != nil {
		return 0, err
	}
	var ms float64
	err := d.do(func() error {
		if err := stop.Record(d.stream); err != nil {
			return err
		}
		if err := d.stream.Synchronize(); err != nil {
			return err
		}
		var err error
		ms, err = start.Elapsed(stop)
		return err
	})
	return ms / 1e3, err
}

// FlushL2 overwrites a buffer of 4× the L2 size (at least 256 MiB) so that the next kernel reads
// its inputs from DRAM.
func (d *driver) FlushL2() error {
	size := max(4*d.l2, 256<<20)
	return d.do(func() error {
		if d.flush == 0 {
			p, err := cu.MemAlloc(int64(size))
			if err != nil {
				return err
			}
			d.flush = p
		}
		return cu.MemsetD32Async(d.flush, 0, int64(size/4), d.stream)
	})
}

func (d *driver) PeakBandwidth() float64 { return d.peak }
