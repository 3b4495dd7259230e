//go:build !cudashim

package cuda

// ShimBuilt reports whether this binary carries the host shim (-tags cudashim).
const ShimBuilt = false

// NewShimBackend returns nil in a binary built without -tags cudashim.
func NewShimBackend() Backend { return nil }

// NewShimCollectives returns nil in a binary built without -tags cudashim (the in-process NCCL
// sums the shim's host memory).
func NewShimCollectives(size int) []Collective { return nil }
