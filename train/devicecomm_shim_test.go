//go:build cudashim || cuda

package train

import (
	"testing"

	"holdgo/tensor"
)

// TestShimDeviceCommMatchesOne: the reduction in device memory with each rank
// on its own CUDA device (the host shim, or a GPU): the toy MLP and ncsnpp-tiny
// with dropout on 2 and 3 ranks, their gradients summed bucket by bucket by the
// in-process device communicator as the backward sweep finishes them (the
// --dist nccl path with the in-process engine in NCCL's place), equal one
// device trainer with the whole batch.
func TestShimDeviceCommMatchesOne(t *testing.T) {
	dev := func() tensor.Device { return serialDevice(t) }
	runDeviceRanks(t, toyDeviceCase, 2, dev)
	runDeviceRanks(t, toyDeviceCase, 3, dev)
	runDeviceRanks(t, tinyDeviceCase, 2, dev)
	if testing.Short() {
		t.Log("-short: ncsnpp-tiny on 3 ranks left out (minutes on the shim)")
		return
	}
	runDeviceRanks(t, tinyDeviceCase, 3, dev)
}
