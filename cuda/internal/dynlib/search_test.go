package dynlib

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"holdgo/cuda/internal/dynlib/dynlibtest"
)

func TestCandidatesOrder(t *testing.T) {
	s := Search{Env: "/x/libcublas.so", Names: []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"},
		Bare: true, Dirs: []string{"/a", "/b", "/a"}}
	want := []string{"/x/libcublas.so",
		"libcublas.so.13", "/a/libcublas.so.13", "/b/libcublas.so.13",
		"libcublas.so.12", "/a/libcublas.so.12", "/b/libcublas.so.12",
		"libcublas.so.11", "/a/libcublas.so.11", "/b/libcublas.so.11"}
	if got := s.Candidates(); !slices.Equal(got, want) {
		t.Errorf("candidates\n got  %q\n want %q", got, want)
	}
}

// DefaultSearch: $EnvVar, then each soname bare and in the toolkit's ($CUDA_HOME, /usr/local/cuda),
// the distribution's, conda's and the virtual environment's wheel folders, before the next soname.
func TestDefaultSearch(t *testing.T) {
	wheel := dynlibtest.Wheel(t, "fake")
	spec := Spec{EnvVar: "HOLDGO_FAKE", Names: []string{"libfake.so.2", "libfake.so.1"}, Wheel: "fake"}
	t.Setenv(spec.EnvVar, "/opt/mine/libfake.so.2")
	t.Setenv("CONDA_PREFIX", "/opt/env")
	t.Setenv("CUDA_HOME", "/opt/cuda")
	c := spec.DefaultSearch().Candidates()
	if c[0] != "/opt/mine/libfake.so.2" || c[1] != "libfake.so.2" {
		t.Errorf("candidates start %q, want $%s then the bare libfake.so.2", c[:2], spec.EnvVar)
	}
	for _, p := range []string{"/opt/cuda/lib64/libfake.so.2", "/usr/local/cuda/lib64/libfake.so.1",
		filepath.Join(wheel, "libfake.so.2"), "/opt/env/lib/libfake.so.2", "/usr/lib/x86_64-linux-gnu/libfake.so.1"} {
		if !slices.Contains(c, p) {
			t.Errorf("candidates lack %s", p)
		}
	}
	if i, j := slices.Index(c, "/usr/lib/x86_64-linux-gnu/libfake.so.2"), slices.Index(c, "libfake.so.1"); i > j {
		t.Errorf("a .1 comes before the last .2")
	}
}

func TestLoadErrorMessage(t *testing.T) {
	e := &LoadError{Spec: Spec{Name: "cuBLAS", EnvVar: "HOLDGO_CUBLAS", Install: "install cuBLAS", File: "libcublas.so.N"},
		Tried: []Attempt{{"/a/libcublas.so.13", "not found"}, {"libcublas.so.12", "dlopen: bad ELF"}}}
	for _, want := range []string{"no usable cuBLAS (tried 2 paths", "/a/libcublas.so.13: not found",
		"libcublas.so.12: dlopen: bad ELF", "); install cuBLAS or set HOLDGO_CUBLAS to the path of libcublas.so.N"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("%q lacks %q", e.Error(), want)
		}
	}
}
