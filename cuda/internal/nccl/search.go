// Package nccl loads NVIDIA's NCCL at run time (dlopen and dlsym of the few functions data-parallel
// training calls: the unique id, communicator init, all-reduce, group start and end, the
// asynchronous error, abort, destroy and the version), as cuda/internal/cublas loads cuBLAS: a
// -tags cuda binary has no link-time libnccl and runs where none is installed until --dist nccl
// asks for it. The search, the dlopen and the error that lists what was tried are
// cuda/internal/dynlib's; this package holds NCCL's names, symbol table and calls.
//
// This file, NCCL's names, is pure Go and builds everywhere. The loader itself (nccl.go) uses cgo
// and builds with -tags cuda, or with -tags dynlib for its tests, which need only gcc and fake
// libraries made by the test.
package nccl

import (
	"fmt"

	"holdgo/cuda/internal/dynlib"
)

// EnvVar names the environment variable whose path is tried before any other.
const EnvVar = "HOLDGO_NCCL"

// Names are the NCCL sonames tried (NCCL 2, the only major version with this API).
var Names = []string{"libnccl.so.2"}

// spec is NCCL for dynlib: its names, and the advice of the error when none loads.
var spec = dynlib.Spec{Name: "NCCL", EnvVar: EnvVar, Names: Names, Wheel: "nccl",
	Install: "install NCCL 2 (e.g. pip install nvidia-nccl-cu12, or the distribution's libnccl2)", File: "libnccl.so.2"}

// DefaultSearch is the search of a -tags cuda binary: $HOLDGO_NCCL, then libnccl.so.2 through the
// dynamic loader and in the CUDA, distribution, conda and pip (nvidia-nccl-cu12, -cu13:
// site-packages/nvidia/nccl/lib) folders.
func DefaultSearch() dynlib.Search { return spec.DefaultSearch() }

// VersionString decodes ncclGetVersion's code: major·10000 + minor·100 + patch since NCCL 2.9,
// major·1000 + minor·100 + patch before.
func VersionString(code int) string {
	if code >= 20900 {
		return fmt.Sprintf("%d.%d.%d", code/10000, code%10000/100, code%100)
	}
	return fmt.Sprintf("%d.%d.%d", code/1000, code%1000/100, code%100)
}
