// Package nccl loads NVIDIA's NCCL at run time (dlopen and dlsym of the few functions data-parallel
// training calls: the unique id, communicator init, all-reduce, group start and end, the
// asynchronous error, abort, destroy and the version), as cuda/internal/cublas loads cuBLAS: a
// -tags cuda binary has no link-time libnccl and runs where none is installed until --dist nccl
// asks for it.
//
// This file, the search order and the error that lists what was tried, is pure Go and builds
// everywhere. The loader itself (nccl.go) uses cgo and builds with -tags cuda, or with -tags
// nccldl for its tests, which need only gcc and fake libraries made by the test.
package nccl

import (
	"fmt"
	"os"
	"strings"

	"holdgo/cuda/internal/cublas"
)

// EnvVar names the environment variable whose path is tried before any other.
const EnvVar = "HOLDGO_NCCL"

// Names are the NCCL sonames tried (NCCL 2, the only major version with this API).
var Names = []string{"libnccl.so.2"}

// Search says where Load looks for NCCL (the same rules as cuBLAS's: $HOLDGO_NCCL, then each name
// through the dynamic loader and in each folder).
type Search = cublas.Search

// Attempt is one path Load tried and why it was not used.
type Attempt = cublas.Attempt

// DefaultSearch is the search of a -tags cuda binary: $HOLDGO_NCCL, then libnccl.so.2 through the
// dynamic loader and in the CUDA, distribution, conda and pip (nvidia-nccl-cu12, -cu13:
// site-packages/nvidia/nccl/lib) folders.
func DefaultSearch() Search {
	return Search{Env: os.Getenv(EnvVar), Names: Names, Bare: true, Dirs: cublas.LibraryDirs("nccl")}
}

// LoadError is Load's error when no candidate gave a usable NCCL: every path tried, in order, with
// the reason.
type LoadError struct {
	Tried []Attempt
}

func (e *LoadError) Error() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "no usable NCCL (tried %d paths, in order:", len(e.Tried))
	for _, a := range e.Tried {
		fmt.Fprintf(&sb, "\n  %s: %s", a.Path, a.Reason)
	}
	fmt.Fprintf(&sb, "\n); install NCCL 2 (e.g. pip install nvidia-nccl-cu12, or the distribution's libnccl2) or set %s to the path of libnccl.so.2", EnvVar)
	return sb.String()
}

// VersionString decodes ncclGetVersion's code: major·10000 + minor·100 + patch since NCCL 2.9,
// major·1000 + minor·100 + patch before.
func VersionString(code int) string {
	if code >= 20900 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
}
