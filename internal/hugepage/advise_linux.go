//go:build linux

package hugepage

import (
	"syscall"
	"unsafe"
)

// madvHugepage is MADV_HUGEPAGE from <linux/mman.h> (the syscall package
// does not name it).
const madvHugepage = 14

// advise applies MADV_HUGEPAGE to the whole 4 KiB pages inside s (madvise
// wants a page-aligned start); the kernel backs the 2 MiB-aligned parts of
// that range with huge pages. Errors (EINVAL where THP is compiled out) are
// ignored: the advice is an optimisation only.
func advise(s []float32) {
	const page = 4096
	start := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	end := start + 4*uintptr(len(s))
	lo := (start + page - 1) &^ (page - 1)
	hi := end &^ (page - 1)
	if hi <= lo {
		return
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), 4*len(s))
	_ = syscall.Madvise(b[lo-start:hi-start], madvHugepage)
}
