//go:build !cuda && !cudashim

package main

import (
	"fmt"
	"io"
	"strings"

	"holdgo/tensor"
)

// errNoCUDA explains how to get a CUDA-enabled holdctl.
var errNoCUDA = fmt.Errorf("holdctl was built without CUDA support: use --device cpu, or rebuild with 'go build -tags cuda ./cmd/holdctl' (needs the CUDA toolkit: kernels/install-cuda.sh) for a GPU, or 'go build -tags cudashim -o holdctl-shim ./cmd/holdctl' to run the CUDA kernels on the CPU")

// openDevice returns the device named by --device: "cpu" or "reference"; "cuda" needs a build
// with -tags cuda.
func openDevice(name string) (tensor.Device, error) {
	switch {
	case name == "" || name == "cpu":
		return tensor.CPU, nil
	case name == "reference":
		return tensor.Reference, nil
	case name == "cuda" || strings.HasPrefix(name, "cuda:"):
		return nil, errNoCUDA
	}
	return nil, fmt.Errorf("unknown device %q (want cpu, reference, cuda or cuda:N)", name)
}

// benchKernels reports that this build has no CUDA.
func benchKernels(io.Writer, string, benchOptions) error { return errNoCUDA }

// benchOptions mirrors cuda.BenchOptions, which this build does not link.
type benchOptions struct{ Elements, GemmSize, Reps int }
