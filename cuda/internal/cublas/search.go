// Package cublas loads NVIDIA's cuBLAS at run time (dlopen and dlsym of the few functions the
// CUDA backend uses), so a -tags cuda binary has no link-time libcublas: built on Debian against
// CUDA 11.8 it runs with any cuBLAS from 11 to 13 found on the GPU machine.
//
// This file, the search order and the error that lists what was tried, is pure Go and builds
// everywhere. The loader itself (cublas.go) uses cgo and builds with -tags cuda, or with
// -tags cublasdl for its tests, which need only gcc and fake libraries made by the test.
package cublas

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// EnvVar names the environment variable whose path is tried before any other.
const EnvVar = "HOLDGO_CUBLAS"

// Names are the cuBLAS sonames tried, newest major version first.
var Names = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

// Search says where Load looks for cuBLAS: Env (when set) first, then for each of Names in turn
// the bare name (the dynamic loader's own search: LD_LIBRARY_PATH, the ld.so cache; when Bare is
// set) and the name in each of Dirs.
type Search struct {
	Env   string   // an explicit library path ($HOLDGO_CUBLAS), tried first
	Names []string // sonames, in order of preference
	Bare  bool     // also try each bare name through the dynamic loader's search path
	Dirs  []string // folders tried for each name, in order
}

// Candidates is the list of paths Load tries, in order, without duplicates.
func (s Search) Candidates() []string {
	var out []string
	add := func(p string) {
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(s.Env)
	for _, name := range s.Names {
		if s.Bare {
			add(name)
		}
		for _, dir := range s.Dirs {
			add(filepath.Join(dir, name))
		}
	}
	return out
}

// DefaultSearch is the search of a -tags cuda binary: $HOLDGO_CUBLAS, then libcublas.so.13, .12
// and .11 through the dynamic loader and in the usual CUDA, distribution and Python folders
// ($CUDA_HOME, /usr/local/cuda*, conda, the nvidia-cublas wheels of a virtual environment or of
// the system's Python).
func DefaultSearch() Search {
	return Search{Env: os.Getenv(EnvVar), Names: Names, Bare: true, Dirs: LibraryDirs("cublas")}
}

// LibraryDirs are the folders searched for an NVIDIA library, in order: the CUDA toolkit's
// ($CUDA_HOME, /usr/local/cuda*), the distribution's, conda's and those of the nvidia-WHEEL-cuXX
// Python wheels (site-packages/nvidia/WHEEL/lib). cuda/internal/nccl searches them too.
func LibraryDirs(wheel string) []string {
	arch := "x86_64-linux"
	multi := "x86_64-linux-gnu"
	if runtime.GOARCH == "arm64" {
		arch, multi = "sbsa-linux", "aarch64-linux-gnu"
	}
	var dirs []string
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH", "CUDA_ROOT"} {
		if root := os.Getenv(v); root != "" {
			dirs = append(dirs, filepath.Join(root, "lib64"), filepath.Join(root, "targets", arch, "lib"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/lib64", "/usr/local/cuda/targets/"+arch+"/lib")
	versioned, _ := filepath.Glob("/usr/local/cuda-*/lib64")
	slices.Sort(versioned)
	slices.Reverse(versioned) // newest toolkit first
	dirs = append(dirs, versioned...)
	dirs = append(dirs, "/usr/lib/"+multi, "/usr/lib64")
	// Python: the nvidia-cublas-cuXX wheels (pip install torch brings them) keep the library in
	// site-packages/nvidia/cublas/lib (nvidia-nccl-cuXX: nvidia/nccl/lib); conda keeps it in the
	// environment's lib.
	var prefixes []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if p := os.Getenv(v); p != "" {
			prefixes = append(prefixes, p)
			if v == "CONDA_PREFIX" {
				dirs = append(dirs, filepath.Join(p, "lib"))
			}
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		prefixes = append(prefixes, filepath.Join(home, ".local"))
	}
	prefixes = append(prefixes, "/usr/local", "/usr", "/opt/conda")
	for _, p := range prefixes {
		for _, pattern := range []string{
			"lib/python3*/site-packages/nvidia/" + wheel + "/lib",
			"lib/python3*/dist-packages/nvidia/" + wheel + "/lib",
			"lib/python3/dist-packages/nvidia/" + wheel + "/lib",
		} {
			found, _ := filepath.Glob(filepath.Join(p, pattern))
			slices.Sort(found)
			dirs = append(dirs, found...)
		}
	}
	dirs = append(dirs, "/opt/conda/lib")
	return dirs
}

// Attempt is one path Load tried and why it was not used.
type Attempt struct {
	Path   string
	Reason string
}

// LoadError is Load's error when no candidate gave a usable cuBLAS: every path tried, in order,
// with the reason.
type LoadError struct {
	Tried []Attempt
}

func (e *LoadError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "no usable cuBLAS (tried %d paths, in order:", len(e.Tried))
	for _, a := range e.Tried {
		fmt.Fprintf(&sb, "\n  %s: %s", a.Path, a.Reason)
	}
	fmt.Fprintf(&sb, "\n); install cuBLAS 11, 12 or 13 (e.g. pip install nvidia-cublas-cu12) or set %s to the path of libcublas.so.N", EnvVar)
	return sb.String()
}
