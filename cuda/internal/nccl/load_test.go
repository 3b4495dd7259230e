//go:build cuda || nccldl

package nccl

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

// fake builds a fake NCCL with gcc at dir/name reporting version code.
func fake(t *testing.T, dir, name string, code int, broken bool) string {
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
	args := []string{"-shared", "-fPIC", "-O1", "-o", out, src, fmt.Sprintf("-DVERSION=%d", code)}
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

// $HOLDGO_NCCL comes first, then libnccl.so.2 in each folder in turn; a missing, non-ELF or
// symbol-less file falls through to the next.
func TestLoadOrder(t *testing.T) {
	root := t.TempDir()
	d1, d2, env := filepath.Join(root, "d1"), filepath.Join(root, "d2"), filepath.Join(root, "env")
	fake(t, d2, "libnccl.so.2", 21805, false)
	explicit := fake(t, env, "libmine.so", 22105, false)
	broken := fake(t, filepath.Join(root, "b"), "libnccl.so.2", 22000, true)
	junk := filepath.Join(root, "j", "libnccl.so.2")
	if err := os.MkdirAll(filepath.Dir(junk), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		s    Search
		want string // version
		path string
	}{
		{"env first", Search{Env: explicit, Names: Names, Dirs: []string{d2}}, "2.21.5", explicit},
		{"missing env and folder fall through", Search{Env: filepath.Join(root, "nope.so"), Names: Names, Dirs: []string{d1, d2}}, "2.18.5", filepath.Join(d2, "libnccl.so.2")},
		{"non-ELF and symbol-less fall through", Search{Names: Names, Dirs: []string{filepath.Dir(junk), filepath.Dir(broken), d2}}, "2.18.5", filepath.Join(d2, "libnccl.so.2")},
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
	broken := fake(t, filepath.Join(root, "a"), "libnccl.so.2", 22000, true)
	junk := filepath.Join(root, "b", "libnccl.so.2")
	if err := os.MkdirAll(filepath.Dir(junk), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := filepath.Join(root, "missing", "libnccl.so.2")
	s := Search{Env: env, Names: Names, Dirs: []string{filepath.Join(root, "a"), filepath.Join(root, "b")}}
	lib, err := Load(s)
	if err == nil {
		lib.Close()
		t.Fatalf("Load loaded %s", lib.Path)
	}
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("error %T %v, want *LoadError", err, err)
	}
	want := []string{env, broken, junk}
	if len(le.Tried) != len(want) {
		t.Fatalf("tried %v, want %v", le.Tried, want)
	}
	for i, a := range le.Tried {
		if a.Path != want[i] {
			t.Errorf("attempt %d: %s, want %s", i, a.Path, want[i])
		}
	}
	msg := err.Error()
	for _, part := range []string{env, broken, junk, "not found", "no symbol ncclCommAbort", "dlopen", EnvVar} {
		if !strings.Contains(msg, part) {
			t.Errorf("error lacks %q:\n%s", part, msg)
		}
	}
	t.Log(msg)
}

// The calls pass their arguments in NCCL's order: the unique id by value, the all-reduce's
// addresses, count, type and operation (checked by the fake's own reduction on host memory);
// errors carry NCCL's message; an asynchronous error is reported.
func TestCalls(t *testing.T) {
	lib := load(t, Search{Env: fake(t, t.TempDir(), "libnccl.so.2", 22105, false)})
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
