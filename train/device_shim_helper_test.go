//go:build cudashim && !cuda

package train

import (
	"testing"

	"holdgo/cuda"
)

// testBackend is the host shim: the CUDA kernels compiled for the CPU.
func testBackend(testing.TB) cuda.Backend { return cuda.NewShimBackend() }

// testDevice is a fresh device on the shim.
func testDevice(t testing.TB) *cuda.Device { return cuda.NewDevice(testBackend(t)) }
