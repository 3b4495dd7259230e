//go:build cuda || dynlib

package nccl

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"holdgo/cuda/internal/dynlib"
	"holdgo/cuda/internal/dynlib/dynlibtest"
)

// fakeSource is a stand-in NCCL: every function the loader binds, ncclGetVersion answering
// VERSION (so a test can tell which file loaded), a unique id of bytes 0…127 that
// ncclCommInitRank checks (so the 128-byte by-value argument is passed right), and an
// ncclAllReduce on host memory that multiplies by the rank count (every rank holding the same
// data), checking the type and operation codes. Rank 99 gets a communicator whose asynchronous
// error is ncclRemoteError (6). -DBROKEN leaves ncclCommAbort out.
const fakeSource = `
#include <stddef.h>
typedef struct { char internal[128]; } id_t_;
typedef struct { int n, rank, async; } comm_t_;
static comm_t_ comm;
static int depth;
int ncclGetVersion(int* v) { *v = VERSION; return 0; }
int ncclGetUniqueId(id_t_* id) { for (int i = 0; i < 128; i++) id->internal[i] = (char)i; return 0; }
int ncclCommInitRank(void** out, int n, id_t_ id, int rank) {
	for (int i = 0; i < 128; i++) if (id.internal[i] != (char)i) return 4;
	comm.n = n; comm.rank = rank; comm.async = rank == 99 ? 6 : 0;
	*out = &comm;
	return 0;
}
int ncclAllReduce(const void* s, void* r, size_t count, int dt, int op, void* c, void* stream) {
	int n = ((comm_t_*)c)->n;
	if (op != 0 || stream != NULL) return 4;
	if (dt == 7) for (size_t i = 0; i < count; i++) ((float*)r)[i] = ((const float*)s)[i] * n;
	else if (dt == 8) for (size_t i = 0; i < count; i++) ((double*)r)[i] = ((const double*)s)[i] * n;
	else return 4;
	return 0;
}
int ncclGroupStart(void) { depth++; return 0; }
int ncclGroupEnd(void) { if (depth == 0) return 5; depth--; return 0; }
int ncclCommGetAsyncError(void* c, int* e) { *e = ((comm_t_*)c)->async; return 0; }
#ifndef BROKEN
int ncclCommAbort(void* c) { return 0; }
#endif
int ncclCommDestroy(void* c) { return 0; }
const char* ncclGetErrorString(int r) { return r == 6 ? "remote process exited or there was a network error" : r == 4 ? "invalid argument" : r == 5 ? "invalid usage" : "unknown"; }
`

// NCCL's table binds from a fake named by $HOLDGO_NCCL (dynlib.Search.Env) and its version reads; a
// library without ncclCommAbort is refused by name; when nothing loads, the error names every path
// tried and how to get NCCL. (The search's order and fall-through are dynlib's, tested there.)
func TestLoad(t *testing.T) {
	root := t.TempDir()
	mine := dynlibtest.Library(t, fakeSource, filepath.Join(root, "env"), "libmine.so", "-DVERSION=22105")
	broken := dynlibtest.Library(t, fakeSource, root, "libnccl.so.2", "-DVERSION=22000", "-DBROKEN")
	lib, err := Load(dynlib.Search{Env: mine, Names: Names, Dirs: []string{root}})
	if err != nil {
		t.Fatal(err)
	}
	if lib.Path != mine || lib.Version() != "2.21.5" {
		t.Errorf("loaded %s %s, want %s 2.21.5", lib.Path, lib.Version(), mine)
	}
	lib.Close()
	missing := filepath.Join(root, "none", "libnccl.so.2")
	_, err = Load(dynlib.Search{Env: missing, Names: Names, Dirs: []string{root}})
	dynlibtest.ErrorContains(t, err, "no usable NCCL (tried 2 paths", missing+": not found", broken+": not a usable NCCL: no symbol ncclCommAbort",
		"); install NCCL 2 (e.g. pip install nvidia-nccl-cu12, or the distribution's libnccl2) or set HOLDGO_NCCL to the path of libnccl.so.2")
}

// The calls pass their arguments in NCCL's order: the unique id by value, the all-reduce's
// addresses, count, type and operation (checked by the fake's own reduction on host memory);
// errors carry NCCL's message; an asynchronous error is reported.
func TestCalls(t *testing.T) {
	lib, err := Load(dynlib.Search{Env: dynlibtest.Library(t, fakeSource, t.TempDir(), "libnccl.so.2", "-DVERSION=22105")})
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Close()
	id, err := lib.UniqueID()
	if err != nil {
		t.Fatal(err)
	}
	c, err := lib.InitRank(3, 1, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AsyncError(); err != nil {
		t.Errorf("healthy communicator: %v", err)
	}
	f := []float32{1, 2, 3, 4}
	d := []float64{0.5, 0.25}
	if err := lib.GroupStart(); err != nil {
		t.Fatal(err)
	}
	if err := c.AllReduce(addr(f), addr(f), 3, false, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.AllReduce(addr(d), addr(d), 2, true, nil); err != nil {
		t.Fatal(err)
	}
	if err := lib.GroupEnd(); err != nil {
		t.Fatal(err)
	}
	if f[0] != 3 || f[2] != 9 || f[3] != 4 || d[0] != 1.5 || d[1] != 0.75 {
		t.Errorf("all-reduce over 3 ranks: %v %v", f, d)
	}
	runtime.KeepAlive(f)
	runtime.KeepAlive(d)
	if err := lib.GroupEnd(); err == nil || !strings.Contains(err.Error(), "invalid usage") {
		t.Errorf("GroupEnd without GroupStart: %v", err)
	}
	id[5] = 0
	if _, err := lib.InitRank(2, 0, id); err == nil || !strings.Contains(err.Error(), "ncclCommInitRank: invalid argument") {
		t.Errorf("a damaged unique id: %v", err)
	}
	id[5] = 5
	bad, err := lib.InitRank(2, 99, id)
	if err != nil {
		t.Fatal(err)
	}
	if err := bad.AsyncError(); err == nil || !strings.Contains(err.Error(), "remote process exited") {
		t.Errorf("asynchronous error: %v", err)
	}
	if err := bad.Abort(); err != nil {
		t.Error(err)
	}
	if err := c.Destroy(); err != nil {
		t.Error(err)
	}
}

func addr[T any](x []T) uintptr { return uintptr(unsafe.Pointer(&x[0])) }
