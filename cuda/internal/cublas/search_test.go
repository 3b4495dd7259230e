package cublas

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestCandidatesOrder(t *testing.T) {
	s := Search{Env: "/x/libcublas.so", Names: Names, Bare: true, Dirs: []string{"/a", "/b", "/a"}}
	want := []string{"/x/libcublas.so",
		"libcublas.so.13", "/a/libcublas.so.13", "/b/libcublas.so.13",
		"libcublas.so.12", "/a/libcublas.so.12", "/b/libcublas.so.12",
		"libcublas.so.11", "/a/libcublas.so.11", "/b/libcublas.so.11"}
	if got := s.Candidates(); !slices.Equal(got, want) {
		t.Errorf("candidates\n got  %q\n want %q", got, want)
	}
}

func TestDefaultSearch(t *testing.T) {
	venv := t.TempDir()
	wheel := filepath.Join(venv, "lib", "python3.11", "site-packages", "nvidia", "cublas", "lib")
	if err := os.MkdirAll(wheel, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, "/opt/mine/libcublas.so.12")
	t.Setenv("VIRTUAL_ENV", venv)
	t.Setenv("CUDA_HOME", "/opt/cuda")
	c := DefaultSearch().Candidates()
	if c[0] != "/opt/mine/libcublas.so.12" || c[1] != "libcublas.so.13" {
		t.Errorf("candidates start %q, want $%s then the bare libcublas.so.13", c[:2], EnvVar)
	}
	for _, p := range []string{"/opt/cuda/lib64/libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.11",
		filepath.Join(wheel, "libcublas.so.12"), "/usr/lib/x86_64-linux-gnu/libcublas.so.11"} {
		if !slices.Contains(c, p) {
			t.Errorf("candidates lack %s", p)
		}
	}
	if i, j := slices.Index(c, "/usr/lib/x86_64-linux-gnu/libcublas.so.13"), slices.Index(c, "libcublas.so.12"); i > j {
		t.Errorf("a .12 comes before the last .13")
	}
}

func TestLoadErrorMessage(t *testing.T) {
	e := &LoadError{Tried: []Attempt{{"/a/libcublas.so.13", "not found"}, {"libcublas.so.12", "dlopen: bad ELF"}}}
	for _, want := range []string{"tried 2 paths", "/a/libcublas.so.13: not found", "libcublas.so.12: dlopen: bad ELF", EnvVar} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
}
