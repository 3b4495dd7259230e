//go:build cudashim

package cuda

import "holdgo/cuda/internal/shim"

// ShimBuilt reports whether this binary carries the host shim (-tags cudashim).
const ShimBuilt = true

// NewShimBackend returns the host-shim backend: the CUDA kernels compiled for the CPU
// (cuda/internal/shim). holdctl built with -tags cudashim opens it for --device cuda, so the whole
// GPU path runs, slowly, on a machine without a GPU.
func NewShimBackend() Backend { return &shim.Backend{} }
