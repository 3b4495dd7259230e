//go:build cuda

package cuda

import "testing"

// The driver's staged upload: pinned buffers (cuMemHostAlloc), cuMemcpyHtoDAsync on the stream and
// an event per buffer.
func TestGPUStager(t *testing.T) { checkStagerSum(t, openGPU(t)) }
