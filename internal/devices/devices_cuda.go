//go:build cuda

package devices

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"holdgo/cuda"
)

// OpenCUDA opens the GPU cuda or cuda:N.
func OpenCUDA(name string) (*cuda.Device, error) {
	ordinal := 0
	if rest, ok := strings.CutPrefix(name, "cuda:"); ok {
		n, err := strconv.Atoi(rest)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("bad device %q (want cuda:N)", name)
		}
		ordinal = n
	}
	dev, err := cuda.Open(ordinal)
	if err != nil {
		return nil, fmt.Errorf("--device %s: %w; use --device cpu on this machine", name, err)
	}
	return dev, nil
}

// BenchKernels times every CUDA kernel family on the GPU and prints the table; a *MemoryError when
// the workloads' staging does not fit the memory budget.
func BenchKernels(w io.Writer, name string, opts cuda.BenchOptions) error {
	return benchKernels(w, name, opts, false)
}

// Libraries describes the cuBLAS, the NCCL (for --dist nccl) and the JIT cache this binary uses.
func Libraries() []string {
	blas, err := cuda.BLASInfo()
	if err != nil {
		blas = err.Error()
	}
	nccl, err := cuda.NCCLInfo()
	if err != nil {
		nccl = "none: " + err.Error()
	}
	return []string{"cublas: " + blas, "nccl: " + nccl, "jit cache: " + cuda.JITCachePath() + " (CUDA_CACHE_PATH)"}
}

// Count is the number of GPUs this process sees.
func Count() (int, error) { return cuda.DeviceCount() }
