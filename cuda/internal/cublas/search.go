// Package cublas loads NVIDIA's cuBLAS at run time (dlopen and dlsym of the few functions the
// CUDA backend uses), so a -tags cuda binary has no link-time libcublas: built on Debian against
// CUDA 11.8 it runs with any cuBLAS from 11 to 13 found on the GPU machine. The search, the dlopen
// and the error that lists what was tried are cuda/internal/dynlib's; this package holds cuBLAS's
// names, symbol table and calls.
//
// This file, cuBLAS's names, is pure Go and builds everywhere. The loader itself (cublas.go) uses
// cgo and builds with -tags cuda, or with -tags dynlib for its tests, which need only gcc and fake
// libraries made by the test.
package cublas

import "holdgo/cuda/internal/dynlib"

// EnvVar names the environment variable whose path is tried before any other.
const EnvVar = "HOLDGO_CUBLAS"

// Names are the cuBLAS sonames tried, newest major version first.
var Names = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

// spec is cuBLAS for dynlib: its names, and the advice of the error when none loads.
var spec = dynlib.Spec{Name: "cuBLAS", EnvVar: EnvVar, Names: Names, Wheel: "cublas",
	Install: "install cuBLAS 11, 12 or 13 (e.g. pip install nvidia-cublas-cu12)", File: "libcublas.so.N"}

// DefaultSearch is the search of a -tags cuda binary: $HOLDGO_CUBLAS, then libcublas.so.13, .12
// and .11 through the dynamic loader and in the usual CUDA, distribution and Python folders
// ($CUDA_HOME, /usr/local/cuda*, conda, the nvidia-cublas wheels of a virtual environment or of
// the system's Python).
func DefaultSearch() dynlib.Search { return spec.DefaultSearch() }
