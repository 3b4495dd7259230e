//go:build cudashim

package cuda

import "testing"

// The shim's backend (NewShimBackend) has the GPU's staged upload.
func TestShimStager(t *testing.T) { checkStagerSum(t, NewDevice(NewShimBackend())) }
