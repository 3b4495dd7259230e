//go:build cuda

package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"holdgo/cuda"
)

func openCUDA(name string) (*cuda.Device, error) {
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

// benchKernels times every CUDA kernel family on the GPU and prints the table.
func benchKernels(w io.Writer, device string, opts benchOptions) error {
	if err := checkKernelMemory(opts, false); err != nil {
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

// cudaLibraries describes the cuBLAS, the NCCL (for --dist nccl) and the JIT cache this binary uses.
func cudaLibraries() []string {
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

// cudaDeviceCount is the number of GPUs this process sees.
func cudaDeviceCount() (int, error) { return cuda.DeviceCount() }
