//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cuda.h>

// gorgonia.org/cu v0.9.6 calls cuInit in its package init and exits the process when it fails, so
// a -tags cuda binary would die on a machine without a GPU before main runs. This definition of
// cuInit interposes on the driver's (the executable's symbol wins over libcuda.so's): it calls the
// real cuInit, remembers the result for Open to report, and lets the package init carry on.
//
// The driver reads CUDA_CACHE_PATH once, in cuInit, which runs before any Go code of this package:
// so this is where a process without one is given holdgo's JIT cache folder
// ($XDG_CACHE_HOME/holdgo/cuda-jit, else ~/.cache/holdgo/cuda-jit), so that the PTX is compiled
// once per driver version and GPU, not by every process.
static CUresult hg_init_result = CUDA_SUCCESS;
static int hg_init_done = 0;

static void hg_default_cache_path(void) {
	if (getenv("CUDA_CACHE_PATH")) return;
	char dir[4096];
	const char* xdg = getenv("XDG_CACHE_HOME");
	const char* home = getenv("HOME");
	if (xdg && xdg[0]) snprintf(dir, sizeof dir, "%s/holdgo", xdg);
	else if (home && home[0]) snprintf(dir, sizeof dir, "%s/.cache/holdgo", home);
	else return;
	mkdir(dir, 0755); // the driver makes the last component itself
	size_t n = strlen(dir);
	snprintf(dir + n, sizeof dir - n, "/cuda-jit");
	setenv("CUDA_CACHE_PATH", dir, 0);
}

CUresult cuInit(unsigned int flags) {
	if (!hg_init_done) {
		hg_default_cache_path();
		CUresult (*real)(unsigned int) = (CUresult (*)(unsigned int))dlsym(RTLD_NEXT, "cuInit");
		hg_init_result = real ? real(flags) : CUDA_ERROR_NOT_INITIALIZED;
		hg_init_done = 1;
	}
	return CUDA_SUCCESS;
}

static int hg_cu_init_result(void) { return (int)hg_init_result; }

// hg_func_max_shared lets fn be launched with up to bytes of dynamic shared memory.
static int hg_func_max_shared(CUfunction fn, int bytes) {
	return (int)cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
}

static const char* hg_cu_error_name(int r) {
	const char* s = 0;
	cuGetErrorString((CUresult)r, &s);
	return s ? s : "unknown CUDA error";
}

// hg_host_alloc returns n bytes of page-locked host memory (cuMemHostAlloc), its status in *res.
static void* hg_host_alloc(size_t n, int* res) {
	void* p = 0;
	*res = (int)cuMemHostAlloc(&p, n, 0);
	return p;
}

static int hg_host_free(void* p) { return (int)cuMemFreeHost(p); }

*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"holdgo/cuda/internal/cublas"
	"holdgo/kernels"
)

// The cuBLAS library, loaded once per process (cuda/internal/cublas): $HOLDGO_CUBLAS, else
// libcublas.so.13, .12 or .11 from the usual folders.
var (
	blasOnce sync.Once
	blasLib  *cublas.Library
	blasErr  error
)

func loadBLAS() (*cublas.Library, error) {
	blasOnce.Do(func() { blasLib, blasErr = cublas.Load(cublas.DefaultSearch()) })
	return blasLib, blasErr
}

// BLASInfo says which cuBLAS a GPU device would use: its path and version, or why none loads.
func BLASInfo() (string, error) {
	lib, err := loadBLAS()
	if err != nil {
		return "", fmt.Errorf("cuda: %w", err)
	}
	return fmt.Sprintf("cuBLAS %s (%s)", lib.Version(), lib.Path), nil
}

// JITCachePath is the folder where the driver caches the PTX it compiled ($CUDA_CACHE_PATH, set
// at start-up to holdgo's folder where the environment named none).
func JITCachePath() string { return os.Getenv("CUDA_CACHE_PATH") }

// driver is the Backend on a real GPU: one primary context, one stream (blocking, so that it is
// ordered with the synchronous copies), the embedded PTX loaded once, and a cuBLAS handle bound to
// the stream. Every call runs with the context current on a locked OS thread.
type driver struct {
	name   string
	dev    cu.Device
	ctx    cu.CUContext
	stream cu.Stream
	funcs  map[string]cu.Function
	blas   *cublas.Handle
	arch   int
	peak   float64
	l2     int
	flush  cu.DevicePtr
	side   sideStream // the collectives' stream (ncclcomm_cuda.go), made on first use
}

// DeviceCount is the number of GPUs this process sees (after CUDA_VISIBLE_DEVICES).
func DeviceCount() (int, error) {
	if r := C.hg_cu_init_result(); r != 0 {
		if r == C.CUDA_ERROR_NO_DEVICE {
			return 0, nil
		}
		return 0, fmt.Errorf("cuda: the CUDA driver did not initialise (cuInit: %s); is the NVIDIA driver loaded?", C.GoString(C.hg_cu_error_name(r)))
	}
	n, err := cu.NumDevices()
	if err != nil {
		return 0, fmt.Errorf("cuda: count devices: %w", err)
	}
	return n, nil
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
	if _, err := loadBLAS(); err != nil {
		return nil, fmt.Errorf("cuda: %w", err)
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
	if err := checkKernelParams(mods); err != nil {
		return err
	}
	for fam, ptx := range mods {
		m, err := loadPTX(ptx)
		if err != nil {
			return fmt.Errorf("cuda: load %s.ptx (sm_%d) on %s: %w", fam, d.arch, d.name, err)
		}
		for _, name := range kernels.Entries(ptx) {
			if d.funcs[name], err = m.Function(name); err != nil {
				return fmt.Errorf("cuda: %s.ptx: kernel %s: %w", fam, name, err)
			}
		}
	}
	lib, err := loadBLAS()
	if err != nil {
		return fmt.Errorf("cuda: %w", err)
	}
	if d.blas, err = lib.NewHandle(unsafe.Pointer(d.stream.C())); err != nil {
		return fmt.Errorf("cuda: %s: %w", d.name, err)
	}
	return nil
}

// loadPTX JIT-compiles one module with cuModuleLoadDataEx, so that a failure carries the JIT's
// error log (ptxas's messages) rather than the bare status of cuModuleLoadData.
func loadPTX(ptx string) (cu.Module, error) {
	errLog := &cu.JITErrorLogBuffer{Buffer: make([]byte, 16<<10)}
	m, err := cu.LoadDataEx(ptx, errLog)
	if err != nil {
		return m, withJITLog(err, errLog.Buffer)
	}
	return m, nil
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

// BusID is the GPU's PCI address as nvidia-smi prints it ("00000000:19:00.0").
func (d *driver) BusID() string {
	attr := func(a cu.DeviceAttribute) int { v, _ := d.dev.Attribute(a); return v }
	return fmt.Sprintf("%08X:%02X:%02X.0", attr(cu.PciDomainID), attr(cu.PciBusID), attr(cu.PciDeviceID))
}

func (d *driver) Alloc(bytes int) (ptr uintptr, err error) {
	err = d.do(func() error {
		p, err := cu.MemAlloc(int64(bytes))
		ptr = uintptr(p)
		return err
	})
	return
}

// Free releases device memory. cuMemFree synchronises the device: the recorder counts it as a host
// synchronisation (the pool frees only when it trims).
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

// cuError is a CUresult of a call made through cgo here rather than through gorgonia.org/cu.
func cuError(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", call, C.GoString(C.hg_cu_error_name(r)))
}

// AllocPinned implements AsyncUploader: cuMemHostAlloc, page-locked memory the copy engine reads
// directly.
func (d *driver) AllocPinned(bytes int) (p unsafe.Pointer, err error) {
	err = d.do(func() error {
		var res C.int
		p = C.hg_host_alloc(C.size_t(bytes), &res)
		return cuError("cuMemHostAlloc", res)
	})
	return p, err
}

// FreePinned implements AsyncUploader: cuMemFreeHost (which synchronises the device, as the
// recorder counts it).
func (d *driver) FreePinned(p unsafe.Pointer) error {
	return d.do(func() error { return cuError("cuMemFreeHost", C.hg_host_free(p)) })
}

// CopyHtoDAsync implements AsyncUploader: cuMemcpyHtoDAsync on the stream, which from pinned
// memory returns without waiting.
func (d *driver) CopyHtoDAsync(dst uintptr, src unsafe.Pointer, bytes int) error {
	return d.do(func() error { return cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, int64(bytes), d.stream) })
}

// NewFence implements AsyncUploader: an event without timing on the stream.
func (d *driver) NewFence() (Fence, error) {
	f := &driverFence{d: d}
	err := d.do(func() (err error) { f.ev, err = cu.MakeEvent(cu.DisableTiming); return err })
	if err != nil {
		return nil, err
	}
	return f, nil
}

// driverFence is a CUDA event on the driver's stream.
type driverFence struct {
	d  *driver
	ev cu.Event
}

func (f *driverFence) Record() error {
	return f.d.do(func() error { return f.ev.Record(f.d.stream) })
}

// Wait is cuEventSynchronize: it returns at once for an event the stream has passed (or one never
// recorded).
func (f *driverFence) Wait() error { return f.d.do(f.ev.Synchronize) }

func (f *driverFence) Free() error { return f.d.do(func() error { return cu.DestroyEvent(&f.ev) }) }

var _ AsyncUploader = (*driver)(nil)

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

// OptInShared sets the kernel's CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES. (gorgonia.org/cu's
// Function, a struct of one CUfunction, has no setter: its handle is read through unsafe.)
func (d *driver) OptInShared(name string, bytes int) error {
	fn, ok := d.funcs[name]
	if !ok {
		return fmt.Errorf("no kernel named %q", name)
	}
	var h C.CUfunction
	if unsafe.Sizeof(fn) != unsafe.Sizeof(h) {
		return fmt.Errorf("gorgonia.org/cu's Function is not one CUfunction: cannot set its attributes")
	}
	h = *(*C.CUfunction)(unsafe.Pointer(&fn))
	return d.do(func() error {
		if r := C.hg_func_max_shared(h, C.int(bytes)); r != 0 {
			return fmt.Errorf("cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, %d): %s", bytes, C.GoString(C.hg_cu_error_name(r)))
		}
		return nil
	})
}

// Sgemm runs g on cuBLAS through the transpose trick (Gemm.ColumnMajor).
func (d *driver) Sgemm(g Gemm) error {
	c := g.ColumnMajor()
	return d.do(func() error {
		return d.blas.Sgemm(cublas.Gemm{TF32: c.TF32, BF16: c.BF16, TransA: c.TransA, TransB: c.TransB, M: c.M, N: c.N, K: c.K,
			Alpha: c.Alpha, Beta: c.Beta, A: c.A, B: c.B, C: c.C, Lda: c.Lda, Ldb: c.Ldb, Ldc: c.Ldc,
			StrideA: int64(c.StrideA), StrideB: int64(c.StrideB), StrideC: int64(c.StrideC), Batch: c.Batch})
	})
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
