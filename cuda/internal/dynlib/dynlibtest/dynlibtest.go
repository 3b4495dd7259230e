// Package dynlibtest is the test harness of the run-time loaders (cuda/internal/dynlib and the
// loaders built on it): fake shared libraries built with gcc, and the child go test that runs the
// loaders' cgo tests under ordinary CI, which builds without tags.
package dynlibtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Tag is the build tag that builds the loaders' cgo part without -tags cuda.
const Tag = "dynlib"

// Child runs the named tests of the package under test in a child go test with -tags dynlib and
// cgo, and fails t unless each passes: the loaders use cgo, which the default build leaves out,
// and their tests need no GPU, only gcc for the fake libraries. It skips under -short and where
// there is no go command or no gcc.
func Child(t *testing.T, tests ...string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the child go test takes a few seconds")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		if goBin, err = exec.LookPath(filepath.Join(os.Getenv("GOROOT"), "bin", "go")); err != nil {
			wd, _ := os.Getwd()
			t.Skipf("no go command: run go test -tags %s in %s", Tag, wd)
		}
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc: the loader test builds its fake libraries with gcc")
	}
	run := "^(" + strings.Join(tests, "|") + ")$"
	cmd := exec.Command(goBin, "test", "-count=1", "-tags", Tag, "-run", run, "-v", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -tags %s: %v\n%s", Tag, err, out)
	}
	for _, name := range tests {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("child run did not pass %s:\n%s", name, out)
		}
	}
	t.Logf("go test -tags %s:\n%s", Tag, out)
}

// Library builds a fake shared library from the C source with gcc at dir/name, passing args
// ("-DVERSION=22105", "-DBROKEN", "-L", dir, "-ldep") after the source, and returns its path. It
// skips t where there is no gcc.
func Library(t *testing.T, source, dir, name string, args ...string) string {
	t.Helper()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the loader test builds its fake libraries with gcc")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "fake.c")
	if err := os.WriteFile(src, []byte(source), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name)
	args = append([]string{"-shared", "-fPIC", "-O1", "-o", out, src}, args...)
	if b, err := exec.Command(gcc, args...).CombinedOutput(); err != nil {
		t.Fatalf("gcc %v: %v\n%s", args, err, b)
	}
	return out
}

// NotALibrary writes a text file at path (its folder made as needed), which dlopen refuses, and
// returns path.
func NotALibrary(t *testing.T, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not a library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Wheel makes the folder where an nvidia-WHEEL-cuXX Python wheel keeps its library
// (site-packages/nvidia/WHEEL/lib) in a new virtual environment, points $VIRTUAL_ENV at it for
// the rest of the test, and returns the folder.
func Wheel(t *testing.T, wheel string) string {
	t.Helper()
	venv := t.TempDir()
	dir := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", wheel, "lib")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("VIRTUAL_ENV", venv)
	return dir
}

// ErrorContains fails t unless err is an error whose message holds every one of parts.
func ErrorContains(t *testing.T, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one that says %q", parts)
	}
	for _, part := range parts {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error lacks %q:\n%s", part, err)
		}
	}
}

// InOrder fails t unless list holds each of want, in that order (with anything between them).
func InOrder(t *testing.T, list []string, want ...string) {
	t.Helper()
	i := 0
	for _, s := range list {
		if i < len(want) && s == want[i] {
			i++
		}
	}
	if i < len(want) {
		t.Errorf("%q lacks %q after %q", list, want[i], want[:i])
	}
}
