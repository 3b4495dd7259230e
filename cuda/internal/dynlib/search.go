// Package dynlib is what the run-time loaders of NVIDIA's libraries (cuda/internal/cublas,
// cuda/internal/nccl) share: where to look (Search: an explicit path from the environment, then
// each soname through the dynamic loader and in the CUDA, distribution, conda and Python wheel
// folders), the error that names every path tried (LoadError), and the dlopen and dlsym of a
// symbol table (Spec.Open). Each loader keeps its own symbols, sonames, variable and calls.
//
// This file is pure Go and builds everywhere. The dlopen wrapper (dl.go) uses cgo and builds with
// -tags cuda, or with -tags dynlib for the loaders' tests, which need only gcc and the fake
// libraries they build (package dynlibtest).
package dynlib

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// Spec is one library a loader looks for, and how its messages name it.
type Spec struct {
	Name    string   // as messages name it: "cuBLAS", "NCCL"
	EnvVar  string   // the environment variable whose path is tried before any other
	Names   []string // sonames, in order of preference
	Wheel   string   // the NVIDIA Python wheel's folder: site-packages/nvidia/WHEEL/lib
	Install string   // LoadError's advice: how to install the library
	File    string   // what EnvVar should name, in the advice: "libnccl.so.2"
}

// DefaultSearch is the search of a -tags cuda binary: $EnvVar, then each of Names through the
// dynamic loader and in LibraryDirs(Wheel).
func (s Spec) DefaultSearch() Search {
	return Search{Env: os.Getenv(s.EnvVar), Names: s.Names, Bare: true, Dirs: LibraryDirs(s.Wheel)}
}

// Search says where Load looks: Env (when set) first, then for each of Names in turn the bare name
// (the dynamic loader's own search: LD_LIBRARY_PATH, the ld.so cache; when Bare is set) and the
// name in each of Dirs.
type Search struct {
	Env   string   // an explicit library path ($HOLDGO_CUBLAS, $HOLDGO_NCCL), tried first
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

// Load tries the candidates of search in order and returns the first library that open accepts,
// or a *LoadError of spec listing every path tried and why open refused it.
func Load[L any](spec Spec, search Search, open func(path string) (L, error)) (L, error) {
	var tried []Attempt
	for _, path := range search.Candidates() {
		lib, err := open(path)
		if err == nil {
			return lib, nil
		}
		tried = append(tried, Attempt{Path: path, Reason: err.Error()})
	}
	var none L
	return none, &LoadError{Spec: spec, Tried: tried}
}

// LibraryDirs are the folders searched for an NVIDIA library, in order: the CUDA toolkit's
// ($CUDA_HOME, /usr/local/cuda*), the distribution's, conda's and those of the nvidia-WHEEL-cuXX
// Python wheels (site-packages/nvidia/WHEEL/lib).
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

// LoadError is Load's error when no candidate gave a usable library: every path tried, in order,
// with the reason, and the Spec's advice.
type LoadError struct {
	Spec  Spec
	Tried []Attempt
}

func (e *LoadError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "no usable %s (tried %d paths, in order:", e.Spec.Name, len(e.Tried))
	for _, a := range e.Tried {
		fmt.Fprintf(&sb, "\n  %s: %s", a.Path, a.Reason)
	}
	fmt.Fprintf(&sb, "\n); %s or set %s to the path of %s", e.Spec.Install, e.Spec.EnvVar, e.Spec.File)
	return sb.String()
}
