//go:build mpi

package dist

// A thin binding of the MPI C API (OpenMPI 4.1 here: pkg-config ompi; any
// MPI-3 library with the same calls would do): MPI_Init_thread,
// Comm_rank/size, Allreduce with MPI_IN_PLACE, Bcast, Barrier, Abort and
// Finalize on MPI_COMM_WORLD. No maintained Go binding is reachable from
// this project's module proxy, and these nine calls are all training needs.
//
// Thread level: MPI_THREAD_SERIALIZED, so that any OS thread may call MPI
// (goroutines move between threads), one call at a time (a mutex).
//
// Errors: MPI_COMM_WORLD keeps the default handler MPI_ERRORS_ARE_FATAL, so
// an MPI error inside a call aborts the job; OpenMPI's launcher also ends
// every rank when one rank dies (a signal or a non-zero exit without
// MPI_Finalize), so a peer's death never leaves a rank waiting forever.

/*
#cgo pkg-config: ompi
#include <stdlib.h>
#include <mpi.h>

static int hg_init(int *provided) {
	return MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, provided);
}
static int hg_rank(int *r) { return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int hg_size(int *s) { return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int hg_allreduce_f32(float *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}
static int hg_allreduce_f64(double *buf, int n) {
	return MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}
static int hg_bcast_f32(float *buf, int n, int root) { return MPI_Bcast(buf, n, MPI_FLOAT, root, MPI_COMM_WORLD); }
static int hg_bcast_f64(double *buf, int n, int root) { return MPI_Bcast(buf, n, MPI_DOUBLE, root, MPI_COMM_WORLD); }
static int hg_bcast_bytes(void *buf, int n, int root) { return MPI_Bcast(buf, n, MPI_BYTE, root, MPI_COMM_WORLD); }
static int hg_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }
static int hg_abort(int code) { return MPI_Abort(MPI_COMM_WORLD, code); }
static int hg_finalize(void) { return MPI_Finalize(); }
static int hg_thread_serialized(void) { return MPI_THREAD_SERIALIZED; }
static int hg_error_string(int code, char *buf, int *len) { return MPI_Error_string(code, buf, len); }
static int hg_max_error_string(void) { return MPI_MAX_ERROR_STRING; }
*/
import "C"

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"unsafe"
)

// Built reports whether this binary has the MPI communicator (-tags mpi).
const Built = true

// maxCount is the most elements one MPI call moves (its count is a C int);
// longer buffers go in chunks.
var maxCount = 1 << 30

// MPI is the communicator of MPI_COMM_WORLD.
type MPI struct {
	mu         sync.Mutex
	rank, size int
	done       bool
}

// Open returns the job's communicator: MPI_COMM_WORLD when the process was
// started by an MPI launcher (mpirun, srun), else Single, so that the MPI
// build run by hand behaves as the default build.
func Open() (Communicator, error) {
	if _, ok := UnderLauncher(); !ok {
		return Single{}, nil
	}
	// OpenMPI's handlers for SIGSEGV, SIGBUS, … lack SA_ONSTACK, which the Go
	// runtime needs for any handler in its process; leave those signals to Go.
	if _, set := os.LookupEnv("OMPI_MCA_opal_signal"); !set {
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	var provided C.int
	if rc := C.hg_init(&provided); rc != 0 {
		return nil, fmt.Errorf("MPI_Init_thread: %s", errorString(rc))
	}
	if provided < C.hg_thread_serialized() {
		C.hg_abort(1)
		return nil, fmt.Errorf("MPI_Init_thread: the library provides thread level %d, below MPI_THREAD_SERIALIZED", int(provided))
	}
	var r, s C.int
	if rc := C.hg_rank(&r); rc != 0 {
		return nil, fmt.Errorf("MPI_Comm_rank: %s", errorString(rc))
	}
	if rc := C.hg_size(&s); rc != 0 {
		return nil, fmt.Errorf("MPI_Comm_size: %s", errorString(rc))
	}
	return &MPI{rank: int(r), size: int(s)}, nil
}

func errorString(rc C.int) string {
	buf := make([]byte, int(C.hg_max_error_string()))
	var n C.int
	if C.hg_error_string(rc, (*C.char)(unsafe.Pointer(&buf[0])), &n) != 0 || n <= 0 {
		return fmt.Sprintf("MPI error %d", int(rc))
	}
	return fmt.Sprintf("%s (MPI error %d)", strings.TrimSpace(string(buf[:n])), int(rc))
}

// Rank implements Communicator.
func (m *MPI) Rank() int { return m.rank }

// Size implements Communicator.
func (m *MPI) Size() int { return m.size }

// chunks calls f on successive pieces of n elements, at most maxCount each.
func (m *MPI) chunks(name string, n int, f func(off, cnt int) C.int) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return fmt.Errorf("dist: %s after Finalize", name)
	}
	for off := 0; off < n; off += maxCount {
		cnt := min(maxCount, n-off)
		if rc := f(off, cnt); rc != 0 {
			return fmt.Errorf("%s of %d elements: %s: %w", name, n, errorString(rc), ErrPeer)
		}
	}
	return nil
}

// AllreduceF32 implements Communicator (MPI_Allreduce, MPI_IN_PLACE, MPI_SUM).
func (m *MPI) AllreduceF32(buf []float32) error {
	return m.chunks("MPI_Allreduce", len(buf), func(off, cnt int) C.int {
		return C.hg_allreduce_f32((*C.float)(unsafe.Pointer(&buf[off])), C.int(cnt))
	})
}

// AllreduceF64 implements Communicator.
func (m *MPI) AllreduceF64(buf []float64) error {
	return m.chunks("MPI_Allreduce", len(buf), func(off, cnt int) C.int {
		return C.hg_allreduce_f64((*C.double)(unsafe.Pointer(&buf[off])), C.int(cnt))
	})
}

// BcastF32 implements Communicator (MPI_Bcast).
func (m *MPI) BcastF32(buf []float32, root int) error {
	if err := checkRoot(root, m.size); err != nil {
		return err
	}
	return m.chunks("MPI_Bcast", len(buf), func(off, cnt int) C.int {
		return C.hg_bcast_f32((*C.float)(unsafe.Pointer(&buf[off])), C.int(cnt), C.int(root))
	})
}

// BcastF64 implements Communicator.
func (m *MPI) BcastF64(buf []float64, root int) error {
	if err := checkRoot(root, m.size); err != nil {
		return err
	}
	return m.chunks("MPI_Bcast", len(buf), func(off, cnt int) C.int {
		return C.hg_bcast_f64((*C.double)(unsafe.Pointer(&buf[off])), C.int(cnt), C.int(root))
	})
}

// BcastBytes implements Communicator.
func (m *MPI) BcastBytes(buf []byte, root int) error {
	if err := checkRoot(root, m.size); err != nil {
		return err
	}
	return m.chunks("MPI_Bcast", len(buf), func(off, cnt int) C.int {
		return C.hg_bcast_bytes(unsafe.Pointer(&buf[off]), C.int(cnt), C.int(root))
	})
}

// Barrier implements Communicator.
func (m *MPI) Barrier() error {
	return m.chunks("MPI_Barrier", 1, func(int, int) C.int { return C.hg_barrier() })
}

// Abort implements Communicator: msg on standard error, then MPI_Abort,
// which ends every rank of the job with code.
func (m *MPI) Abort(code int, msg string) {
	if msg != "" {
		fmt.Fprintf(os.Stderr, "rank %d of %d: %s\n", m.rank, m.size, strings.TrimRight(msg, "\n"))
	}
	C.hg_abort(C.int(code))
	os.Exit(code) // MPI_Abort does not return; this is for a library that does
}

// Finalize implements Communicator (MPI_Finalize).
func (m *MPI) Finalize() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.done {
		return nil
	}
	m.done = true
	if rc := C.hg_finalize(); rc != 0 {
		return fmt.Errorf("MPI_Finalize: %s", errorString(rc))
	}
	return nil
}
