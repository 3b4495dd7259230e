//go:build cudashim && !cuda

package devices

import (
	"fmt"
	"io"

	"holdgo/cuda"
)

// holdctl-shim (go build -tags cudashim -o holdctl-shim ./cmd/holdctl): --device cuda opens the
// host shim, which runs the CUDA kernels of kernels/*.cu compiled for the CPU behind the real
// device glue, so the whole GPU path can be run and compared with the CPU on a machine without a
// GPU (slowly: every GPU thread is a fiber).

// OpenCUDA opens the host shim (cuda or cuda:0).
func OpenCUDA(name string) (*cuda.Device, error) {
	if name != "cuda" && name != "cuda:0" {
		return nil, fmt.Errorf("--device %s: this is holdctl-shim, whose one CUDA device is the host shim (cuda or cuda:0)", name)
	}
	return cuda.NewDevice(cuda.NewShimBackend()), nil
}

// BenchKernels runs the kernel benchmark driver on the shim (CPU times: a smoke run, not a
// measurement); its device memory is host memory, which the memory budget counts.
func BenchKernels(w io.Writer, name string, opts cuda.BenchOptions) error {
	return benchKernels(w, name, opts, true)
}

// Libraries describes the shim: no driver, no cuBLAS, no JIT.
func Libraries() []string {
	return []string{"cublas: none (host shim: GEMMs run the hg_sgemm kernel on the CPU)", "nccl: none (host shim: --dist nccl needs a GPU build)",
		"jit cache: none (host shim: the kernels are compiled C++)"}
}

// Count: holdctl-shim has one CUDA device, the host shim.
func Count() (int, error) { return 1, nil }
