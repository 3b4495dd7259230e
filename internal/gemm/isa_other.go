//go:build !amd64 || noasm

package gemm

// archKernels: no assembly kernels in this build.
func archKernels() []*kernel { return nil }
