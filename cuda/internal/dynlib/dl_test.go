//go:build cuda || dynlib

package dynlib

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"holdgo/cuda/internal/dynlib/dynlibtest"
)

// fakeSource is a library with a two-function table: fake_answer, and fake_new or, without -DNEW,
// its older name fake_old; -DBROKEN leaves both out.
const fakeSource = `
int fake_answer(void) { return 42; }
#if defined(NEW)
int fake_new(void) { return 1; }
#elif !defined(BROKEN)
int fake_old(void) { return 2; }
#endif
`

var fakeSpec = Spec{Name: "Fake", EnvVar: "HOLDGO_FAKE", Names: []string{"libfake.so.2", "libfake.so.1"},
	Wheel: "fake", Install: "install Fake", File: "libfake.so.N"}

// fakeTable is the table a loader of the fake binds.
type fakeTable struct{ answer, new unsafe.Pointer }

func (f *fakeTable) symbols() []Symbol {
	return []Symbol{{Name: "fake_answer", Addr: unsafe.Pointer(&f.answer)},
		{Name: "fake_new", Alt: "fake_old", Addr: unsafe.Pointer(&f.new)}}
}

func openFake(path string) (*Lib, error) {
	var f fakeTable
	return fakeSpec.Open(path, f.symbols())
}

// $HOLDGO_FAKE (Env) comes first; then each soname in every folder before the next soname; a
// missing, non-ELF or symbol-less file falls through to the next.
func TestLoadOrder(t *testing.T) {
	root := t.TempDir()
	d1, d2 := filepath.Join(root, "d1"), filepath.Join(root, "d2")
	dynlibtest.Library(t, fakeSource, d1, "libfake.so.1")
	dynlibtest.Library(t, fakeSource, d2, "libfake.so.2", "-DNEW")
	explicit := dynlibtest.Library(t, fakeSource, filepath.Join(root, "env"), "libmine.so")
	broken := dynlibtest.Library(t, fakeSource, filepath.Join(root, "b"), "libfake.so.2", "-DBROKEN")
	junk := dynlibtest.NotALibrary(t, filepath.Join(root, "j", "libfake.so.2"))
	names := fakeSpec.Names
	for _, c := range []struct {
		name string
		s    Search
		want string
	}{
		{"env first", Search{Env: explicit, Names: names, Dirs: []string{d1, d2}}, explicit},
		{".2 in the second folder before .1 in the first", Search{Names: names, Dirs: []string{d1, d2}}, filepath.Join(d2, "libfake.so.2")},
		{".1 last", Search{Names: names, Dirs: []string{d1}}, filepath.Join(d1, "libfake.so.1")},
		{"missing env and folder fall through", Search{Env: filepath.Join(root, "nope.so"), Names: names, Dirs: []string{filepath.Join(root, "none"), d2}}, filepath.Join(d2, "libfake.so.2")},
		{"non-ELF and symbol-less fall through", Search{Names: names[:1], Dirs: []string{filepath.Dir(junk), filepath.Dir(broken), d2}}, filepath.Join(d2, "libfake.so.2")},
	} {
		t.Run(c.name, func(t *testing.T) {
			lib, err := Load(fakeSpec, c.s, openFake)
			if err != nil {
				t.Fatalf("Load(%v): %v", c.s.Candidates(), err)
			}
			defer lib.Close()
			if lib.Path != c.want {
				t.Errorf("loaded %s, want %s", lib.Path, c.want)
			}
		})
	}
}

// No usable library: a missing file, a library without one of the functions and a file that is
// not a shared library are each reported, in order, in the one error, with the Spec's advice.
func TestLoadNothingUsable(t *testing.T) {
	root := t.TempDir()
	env := filepath.Join(root, "missing", "libfake.so")
	broken := dynlibtest.Library(t, fakeSource, filepath.Join(root, "a"), "libfake.so.2", "-DBROKEN")
	junk := dynlibtest.NotALibrary(t, filepath.Join(root, "a", "libfake.so.1"))
	lib, err := Load(fakeSpec, Search{Env: env, Names: fakeSpec.Names, Dirs: []string{filepath.Join(root, "a")}}, openFake)
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
	dynlibtest.ErrorContains(t, err, "no usable Fake (tried 3 paths", env+": not found",
		broken+": not a usable Fake: no symbol fake_new", junk+": dlopen: ", "or set HOLDGO_FAKE to the path of libfake.so.N")
	t.Log(err)
}

// A symbol's Alt binds where the library lacks its Name, and Name wins where it has both.
func TestOpenAlt(t *testing.T) {
	dir := t.TempDir()
	for i, args := range [][]string{nil, {"-DNEW"}} {
		var f fakeTable
		lib, err := fakeSpec.Open(dynlibtest.Library(t, fakeSource, dir, fmt.Sprintf("libfake%d.so", i), args...), f.symbols())
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if f.answer == nil || f.new == nil {
			t.Errorf("%v: table %+v has a nil function", args, f)
		}
		lib.Close()
		lib.Close() // a second Close does nothing
	}
}

// A preloaded library lets the dynamic loader resolve a dependency it would not find itself (as
// libcublasLt for libcublas), and a preload that does not open is passed over.
func TestOpenPreload(t *testing.T) {
	dir := t.TempDir()
	dep := dynlibtest.Library(t, "int dep_value(void) { return 7; }\n", filepath.Join(dir, "dep"), "libdep.so", "-Wl,-soname,libdep.so")
	user := dynlibtest.Library(t, "int dep_value(void);\nint fake_answer(void) { return dep_value(); }\n", dir, "libuser.so",
		"-L"+filepath.Dir(dep), "-ldep")
	var answer unsafe.Pointer
	syms := []Symbol{{Name: "fake_answer", Addr: unsafe.Pointer(&answer)}}
	if lib, err := fakeSpec.Open(user, syms); err == nil || !strings.Contains(err.Error(), "libdep.so") {
		if lib != nil {
			lib.Close()
		}
		t.Fatalf("without the preload: %v, want dlopen's libdep.so not found", err)
	}
	lib, err := fakeSpec.Open(user, syms, filepath.Join(dir, "nope.so"), "", dep)
	if err != nil {
		t.Fatalf("with the preload: %v", err)
	}
	defer lib.Close()
	if answer == nil {
		t.Error("fake_answer not bound")
	}
}
