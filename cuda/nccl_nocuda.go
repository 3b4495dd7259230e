//go:build !cuda

package cuda

import "fmt"

// NCCLInfo: a binary built without -tags cuda has no NCCL (it needs GPUs).
func NCCLInfo() (string, error) {
	return "", fmt.Errorf("cuda: NCCL needs a GPU build: %w", ErrNotBuilt)
}
