//go:build cuda

package cuda

import (
	"fmt"
	"sync"

	"holdgo/cuda/internal/nccl"
)

// NCCL, loaded once per process when data-parallel training asks for it (cuda/internal/nccl):
// $HOLDGO_NCCL, else libnccl.so.2 from the usual folders.
var (
	ncclOnce sync.Once
	ncclLib  *nccl.Library
	ncclErr  error
)

func loadNCCL() (*nccl.Library, error) {
	ncclOnce.Do(func() { ncclLib, ncclErr = nccl.Load(nccl.DefaultSearch()) })
	return ncclLib, ncclErr
}

// NCCLInfo says which NCCL --dist nccl would use: its version and path, or why none loads (every
// path tried).
func NCCLInfo() (string, error) {
	lib, err := loadNCCL()
	if err != nil {
		return "", fmt.Errorf("cuda: %w", err)
	}
	return fmt.Sprintf("NCCL %s (%s)", lib.Version(), lib.Path), nil
}
