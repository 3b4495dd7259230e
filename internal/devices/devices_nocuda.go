//go:build !cuda && !cudashim

package devices

import (
	"fmt"
	"io"

	"holdgo/cuda"
)

// errNoCUDA explains how to get a CUDA-enabled holdctl.
var errNoCUDA = fmt.Errorf("holdctl was built without CUDA support: use --device cpu, or rebuild with 'go build -tags cuda ./cmd/holdctl' (needs the CUDA toolkit: kernels/install-cuda.sh) for a GPU, or 'go build -tags cudashim -o holdctl-shim ./cmd/holdctl' to run the CUDA kernels on the CPU")

// OpenCUDA refuses: this build has no CUDA.
func OpenCUDA(string) (*cuda.Device, error) { return nil, errNoCUDA }

// BenchKernels reports that this build has no CUDA.
func BenchKernels(io.Writer, string, cuda.BenchOptions) error { return errNoCUDA }

// Libraries: this build has no CUDA.
func Libraries() []string { return nil }

// Count: this build has no CUDA.
func Count() (int, error) { return 0, errNoCUDA }
