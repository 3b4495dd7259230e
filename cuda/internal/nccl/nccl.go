//go:build cuda || dynlib

package nccl

/*
#include <stddef.h>
#include <stdint.h>
#include <string.h>

// The NCCL 2 ABI used here, declared without nccl.h so that this file builds without NCCL:
// ncclResult_t is a C int (ncclSuccess = 0, ncclInProgress = 7), ncclUniqueId 128 bytes passed by
// value to ncclCommInitRank, ncclComm_t an opaque pointer, ncclFloat32 = 7, ncclFloat64 = 8,
// ncclSum = 0; cudaStream_t is a CUstream.
typedef struct { char internal[128]; } hg_id;
typedef void* hg_comm;

// hg_nccl is the table of NCCL's functions, bound by dynlib (symbols, below).
typedef struct {
	int (*get_version)(int*);
	int (*get_unique_id)(hg_id*);
	int (*init_rank)(hg_comm*, int, hg_id, int);
	int (*all_reduce)(const void*, void*, size_t, int, int, hg_comm, void*);
	int (*group_start)(void);
	int (*group_end)(void);
	int (*async_error)(hg_comm, int*);
	int (*abort)(hg_comm);
	int (*destroy)(hg_comm);
	const char* (*error_string)(int);
} hg_nccl;

static int hg_version(hg_nccl* t, int* v) { return t->get_version(v); }
static int hg_unique_id(hg_nccl* t, void* id) { return t->get_unique_id((hg_id*)id); }
static int hg_init_rank(hg_nccl* t, hg_comm* c, int n, const void* id, int rank) {
	hg_id x;
	memcpy(&x, id, sizeof x);
	return t->init_rank(c, n, x, rank);
}
// Device addresses cross as integers; the casts live here, in C.
static int hg_all_reduce(hg_nccl* t, uintptr_t send, uintptr_t recv, size_t count, int f64, hg_comm c, void* stream) {
	return t->all_reduce((const void*)send, (void*)recv, count, f64 ? 8 : 7, 0, c, stream);
}
static int hg_group_start(hg_nccl* t) { return t->group_start(); }
static int hg_group_end(hg_nccl* t) { return t->group_end(); }
static int hg_async_error(hg_nccl* t, hg_comm c, int* e) { return t->async_error(c, e); }
static int hg_abort(hg_nccl* t, hg_comm c) { return t->abort(c); }
static int hg_destroy(hg_nccl* t, hg_comm c) { return t->destroy(c); }
static const char* hg_error_string(hg_nccl* t, int r) { return t->error_string(r); }
*/
import "C"

import (
	"fmt"
	"unsafe"

	"holdgo/cuda/internal/dynlib"
)

// IDLen is the size of an ncclUniqueId: rank 0 makes it, the other ranks receive it (over MPI).
const IDLen = 128

// ID is an ncclUniqueId.
type ID [IDLen]byte

// Library is a loaded NCCL.
type Library struct {
	Path string // the candidate that loaded
	Code int    // ncclGetVersion
	dl   *dynlib.Lib
	t    *C.hg_nccl
}

// Load tries the candidates of s in order and returns the first library that opens and exports
// every function training calls, or a *dynlib.LoadError listing every path tried and why it failed.
func Load(s dynlib.Search) (*Library, error) { return dynlib.Load(spec, s, open) }

// open binds NCCL's functions from path and reads its version.
func open(path string) (*Library, error) {
	t := new(C.hg_nccl)
	dl, err := spec.Open(path, symbols(t))
	if err != nil {
		return nil, err
	}
	lib := &Library{Path: path, dl: dl, t: t}
	var v C.int
	if err := lib.check("ncclGetVersion", C.hg_version(t, &v)); err != nil {
		lib.Close()
		return nil, err
	}
	lib.Code = int(v)
	return lib, nil
}

// symbols is NCCL's symbol table: each function training calls and its place in t.
func symbols(t *C.hg_nccl) []dynlib.Symbol {
	return []dynlib.Symbol{
		{Name: "ncclGetVersion", Addr: unsafe.Pointer(&t.get_version)},
		{Name: "ncclGetUniqueId", Addr: unsafe.Pointer(&t.get_unique_id)},
		{Name: "ncclCommInitRank", Addr: unsafe.Pointer(&t.init_rank)},
		{Name: "ncclAllReduce", Addr: unsafe.Pointer(&t.all_reduce)},
		{Name: "ncclGroupStart", Addr: unsafe.Pointer(&t.group_start)},
		{Name: "ncclGroupEnd", Addr: unsafe.Pointer(&t.group_end)},
		{Name: "ncclCommGetAsyncError", Addr: unsafe.Pointer(&t.async_error)},
		{Name: "ncclCommAbort", Addr: unsafe.Pointer(&t.abort)},
		{Name: "ncclCommDestroy", Addr: unsafe.Pointer(&t.destroy)},
		{Name: "ncclGetErrorString", Addr: unsafe.Pointer(&t.error_string)},
	}
}

// Version is "major.minor.patch".
func (l *Library) Version() string { return VersionString(l.Code) }

// Close unloads the library; communicators made from it must be destroyed first.
func (l *Library) Close() {
	if l.dl != nil {
		l.dl.Close()
		l.dl, l.t = nil, nil
	}
}

// check turns an ncclResult_t into an error naming the call and NCCL's message.
func (l *Library) check(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	return &Error{Call: call, Code: int(r), Msg: C.GoString(C.hg_error_string(l.t, r))}
}

// Error is a failed NCCL call.
type Error struct {
	Call string
	Code int // ncclResult_t
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (ncclResult %d)", e.Call, e.Msg, e.Code) }

// UniqueID is ncclGetUniqueId: rank 0 calls it and sends the result to the others.
func (l *Library) UniqueID() (ID, error) {
	var id ID
	err := l.check("ncclGetUniqueId", C.hg_unique_id(l.t, unsafe.Pointer(&id[0])))
	return id, err
}

// Comm is an NCCL communicator: one rank on one GPU (the CUDA context current when it was made).
type Comm struct {
	lib *Library
	c   C.hg_comm
}

// InitRank is ncclCommInitRank: rank of n joins the communicator of id (collective: every rank
// calls it with the same id).
func (l *Library) InitRank(n, rank int, id ID) (*Comm, error) {
	c := &Comm{lib: l}
	if err := l.check("ncclCommInitRank", C.hg_init_rank(l.t, &c.c, C.int(n), unsafe.Pointer(&id[0]), C.int(rank))); err != nil {
		return nil, err
	}
	return c, nil
}

// AllReduce is ncclAllReduce with ncclSum of count float32 (or float64) elements from send to
// recv (the same address: in place), device addresses, on stream (a CUstream).
func (c *Comm) AllReduce(send, recv uintptr, count int, f64 bool, stream unsafe.Pointer) error {
	flag := C.int(0)
	if f64 {
		flag = 1
	}
	return c.lib.check("ncclAllReduce", C.hg_all_reduce(c.lib.t, C.uintptr_t(send), C.uintptr_t(recv), C.size_t(count), flag, c.c, stream))
}

// GroupStart and GroupEnd bracket calls that NCCL issues as one (a step's buckets started
// together).
func (l *Library) GroupStart() error { return l.check("ncclGroupStart", C.hg_group_start(l.t)) }

// GroupEnd ends GroupStart's group.
func (l *Library) GroupEnd() error { return l.check("ncclGroupEnd", C.hg_group_end(l.t)) }

// AsyncError is ncclCommGetAsyncError: nil while the communicator is healthy, else the error that
// broke it (a peer lost, a network failure); the caller then aborts.
func (c *Comm) AsyncError() error {
	var e C.int
	if err := c.lib.check("ncclCommGetAsyncError", C.hg_async_error(c.lib.t, c.c, &e)); err != nil {
		return err
	}
	if e == 0 || e == 7 { // ncclSuccess, ncclInProgress
		return nil
	}
	return c.lib.check("NCCL asynchronous error", e)
}

// Abort is ncclCommAbort: it ends the communicator's pending work and frees it; the peers' calls
// fail with an asynchronous error.
func (c *Comm) Abort() error { return c.lib.check("ncclCommAbort", C.hg_abort(c.lib.t, c.c)) }

// Destroy is ncclCommDestroy, after the communicator's work completed.
func (c *Comm) Destroy() error { return c.lib.check("ncclCommDestroy", C.hg_destroy(c.lib.t, c.c)) }
