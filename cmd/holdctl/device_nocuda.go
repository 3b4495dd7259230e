//go:build !cuda && !cudashim

package main

import (
	"fmt"
	"io"

	"holdgo/cuda"
)

// errNoCUDA explains how to get a CUDA-enabled holdctl.
var errNoCUDA = fmt.Errorf("holdctl was built without CUDA support: use --device cpu, or rebuild with 'go build -tags cuda ./cmd/holdctl' (needs the CUDA toolkit: kernels/install-cuda.sh) for a GPU, or 'go build -tags cudashim -o holdctl-shim ./cmd/holdctl' to run the CUDA kernels on the CPU")

// openCUDA refuses: this build has no CUDA.
func openCUDA(string) (*cuda.Device, error) { return nil, errNoCUDA }

// benchKernels reports that this build has no CUDA.
func benchKernels(io.Writer, string, benchOptions) error { return errNoCUDA }

// benchOptions mirrors cuda.BenchOptions, which this build does not link.
type benchOptions struct{ Elements, GemmSize, Reps int }

// cudaLibraries: this build has no CUDA.
func cudaLibraries() []string { return nil }

// cudaDeviceCount: this build has no CUDA.
func cudaDeviceCount() (int, error) { return 0, errNoCUDA }
