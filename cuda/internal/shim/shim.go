//go:build cudashim

// Package shim is a CUDA backend that runs holdgo's CUDA C kernels on the CPU: cgo compiles every
// kernels/*.cu family as C++ against kernels/shim/cuda_shim.h (blocks one after another, the threads
// of a block as fibers with real barriers), and "device memory" is C heap memory. It implements
// cuda.Backend, so the cuda package's own launch glue, memory pool and op dispatch run unchanged on
// top of it; tests compare the results with the Go reference. Built only with -tags cudashim (it
// needs cgo and a C++17 compiler, no CUDA).
package shim

/*
#cgo CXXFLAGS: -std=c++17 -O2 -Wall -Wno-unused-function
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sort"
	"time"
	"unsafe"
)

// Backend is the host-shim device. The zero value is ready to use; it is not safe for concurrent
// use (neither is a CUDA stream).
type Backend struct {
	Launches map[string]int // launches per kernel name, for tests
}

// Name reports "shim".
func (*Backend) Name() string { return "shim" }

// Alloc returns bytes of C memory filled with 0xff (NaN as float32), so that reading memory the
// glue never initialised shows up in the results.
func (*Backend) Alloc(bytes int) (uintptr, error) {
	p := C.aligned_alloc(256, C.size_t((bytes+255)&^255))
	if p == nil {
		return 0, fmt.Errorf("shim: out of host memory allocating %d bytes", bytes)
	}
	C.memset(p, 0xff, C.size_t(bytes))
	return uintptr(p), nil
}

// Free releases memory from Alloc.
func (*Backend) Free(ptr uintptr) error {
	C.free(cptr(ptr))
	return nil
}

// Zero clears bytes at ptr.
func (*Backend) Zero(ptr uintptr, bytes int) error {
	C.memset(cptr(ptr), 0, C.size_t(bytes))
	return nil
}

// CopyHtoD copies bytes from host memory src to ptr.
func (*Backend) CopyHtoD(dst uintptr, src unsafe.Pointer, bytes int) error {
	C.memcpy(cptr(dst), src, C.size_t(bytes))
	return nil
}

// CopyDtoH copies bytes from ptr to host memory dst.
func (*Backend) CopyDtoH(dst unsafe.Pointer, src uintptr, bytes int) error {
	C.memcpy(dst, cptr(src), C.size_t(bytes))
	return nil
}

// CopyDtoD copies bytes between two allocations.
func (*Backend) CopyDtoD(dst, src uintptr, bytes int) error {
	C.memmove(cptr(dst), cptr(src), C.size_t(bytes))
	return nil
}

// OptInShared accepts up to 227 KiB, what a GPU of sm_80 or sm_90 accepts (the shim itself has no
// limit; cuda.Device holds launches to what was opted in to).
func (*Backend) OptInShared(name string, bytes int) error {
	if bytes > 227<<10 {
		return fmt.Errorf("shim: %s: %d bytes of shared memory (at most %d)", name, bytes, 227<<10)
	}
	return nil
}

// Launch runs kernel name to completion. args holds one 8-byte slot per kernel parameter, exactly
// what the CUDA backend hands to cuLaunchKernel.
func (b *Backend) Launch(name string, grid, block [3]int, sharedBytes int, args []uint64) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	// The slots go to C memory: the kernels read them after this call's arguments are checked.
	n := max(len(args), 1)
	slots := (*[1 << 20]C.uint64_t)(C.malloc(C.size_t(8 * n)))[:n:n]
	defer C.free(unsafe.Pointer(&slots[0]))
	for i, v := range args {
		slots[i] = C.uint64_t(v)
	}
	rc := C.hg_shim_launch(cname, C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), C.uint(block[2]), C.size_t(sharedBytes), &slots[0], C.int(len(args)))
	switch rc {
	case 0:
	case 1:
		return fmt.Errorf("shim: no kernel named %q", name)
	default:
		return fmt.Errorf("shim: kernel %s: the threads of a block disagree about __syncthreads", name)
	}
	if b.Launches == nil {
		b.Launches = map[string]int{}
	}
	b.Launches[name]++
	return nil
}

// Time runs f and returns the wall-clock time in seconds (for exercising the benchmark driver;
// shim timings say nothing about a GPU).
func (*Backend) Time(f func() error) (float64, error) {
	start := time.Now()
	err := f()
	return time.Since(start).Seconds(), err
}

// FlushL2 does nothing.
func (*Backend) FlushL2() error { return nil }

// PeakBandwidth is unknown (0).
func (*Backend) PeakBandwidth() float64 { return 0 }

// Sync does nothing: shim launches are synchronous.
func (*Backend) Sync() error { return nil }

// Kernels lists the registered kernel names, sorted.
func Kernels() []string {
	n := int(C.hg_shim_kernel_count())
	names := make([]string, n)
	for i := range names {
		names[i] = C.GoString(C.hg_shim_kernel_name(C.int(i)))
	}
	sort.Strings(names)
	return names
}

// cptr turns a shim device address (a C heap address) back into a C pointer.
func cptr(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
