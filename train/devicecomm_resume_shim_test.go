//go:build cudashim || cuda

package train

import (
	"testing"

	"holdgo/tensor"
)

// TestShimDeviceCommResumeOtherRanks: the toy MLP on CUDA devices (the host
// shim, or a GPU) reduced in buckets, 4 steps on 2 ranks, checkpointed,
// resumed for 4 more on 3 ranks and on 1, equals one device trainer's 8 steps.
func TestShimDeviceCommResumeOtherRanks(t *testing.T) {
	resumeOtherRanks(t, toyDeviceCase, 4, 4, 2, []int{3, 1}, func() tensor.Device { return serialDevice(t) })
}
