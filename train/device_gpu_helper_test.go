//go:build cuda

package train

import (
	"os"
	"sync"
	"testing"

	"holdgo/cuda"
)

var gpu struct {
	once sync.Once
	be   cuda.Backend
	err  error
}

// testBackend is the first GPU's driver backend, opened once per test binary. Without a GPU the
// test is skipped, or fails where HOLDGO_REQUIRE_GPU=1 (make gpu-check) says one must be there.
func testBackend(tb testing.TB) cuda.Backend {
	tb.Helper()
	gpu.once.Do(func() {
		dev, err := cuda.Open(0)
		if err == nil {
			gpu.be = dev.Backend()
		}
		gpu.err = err
	})
	if gpu.err != nil {
		if os.Getenv("HOLDGO_REQUIRE_GPU") == "1" {
			tb.Fatalf("no GPU: %v", gpu.err)
		}
		tb.Skipf("no GPU: %v", gpu.err)
	}
	return gpu.be
}

// testDevice is a fresh device on the GPU in strict FP32: cuBLAS's default TF32 mode rounds GEMM
// inputs to a 10-bit mantissa (≈1e-3 relative), which the comparisons with the CPU would mistake
// for a bug.
func testDevice(tb testing.TB) *cuda.Device {
	d := cuda.NewDevice(testBackend(tb))
	d.StrictFP32 = true
	return d
}
