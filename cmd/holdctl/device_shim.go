//go:build cudashim && !cuda

package main

import (
	"fmt"
	"io"

	"holdgo/cuda"
)

// holdctl-shim (go build -tags cudashim -o holdctl-shim ./cmd/holdctl): --device cuda opens the
// host shim, which runs the CUDA kernels of kernels/*.cu compiled for the CPU behind the real
// device glue, so the whole GPU path can be run and compared with the CPU on a machine without a
// GPU (slowly: every GPU thread is a fiber).

func openCUDA(name string) (*cuda.Device, error) {
	if name != "cuda" && name != "cuda:0" {
		return nil, fmt.Errorf("--device %s: this is holdctl-shim, whose one CUDA device is the host shim (cuda or cuda:0)", name)
	}
	return cuda.NewDevice(cuda.NewShimBackend()), nil
}

// benchKernels runs the kernel benchmark driver on the shim (CPU times: a smoke run, not a
// measurement).
func benchKernels(w io.Writer, device string, opts benchOptions) error {
	if err := checkKernelMemory(opts, true); err != nil {
		return err
	}
	dev, err := openCUDA(device)
	if err != nil {
		return err
	}
	res, err := cuda.BenchKernels(dev, opts)
	if err != nil {
		return err
	}
	cuda.WriteBenchTable(w, dev, res)
	return nil
}

type benchOptions = cuda.BenchOptions

// cudaLibraries describes the shim: no driver, no cuBLAS, no JIT.
func cudaLibraries() []string {
	return []string{"cublas: none (host shim: GEMMs run the hg_sgemm kernel on the CPU)", "nccl: none (host shim: --dist nccl needs a GPU build)",
		"jit cache: none (host shim: the kernels are compiled C++)"}
}

// cudaDeviceCount: holdctl-shim has one CUDA device, the host shim.
func cudaDeviceCount() (int, error) { return 1, nil }
