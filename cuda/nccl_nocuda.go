//go:build !cuda

package cuda

import (
	"fmt"

	"holdgo/dist"
)

// NCCLInfo: a binary built without -tags cuda has no NCCL (it needs GPUs).
func NCCLInfo() (string, error) {
	return "", fmt.Errorf("cuda: NCCL needs a GPU build: %w", ErrNotBuilt)
}

// OpenNCCL: a binary built without -tags cuda has no NCCL engine on GPUs (the engine itself,
// NewNCCLEngine, runs on the host shim in the tests).
func OpenNCCL(dev *Device, comm dist.Communicator, strict bool) (*NCCL, NCCLRecord, error) {
	return nil, NCCLRecord{}, fmt.Errorf("cuda: NCCL needs a GPU build: %w", ErrNotBuilt)
}
