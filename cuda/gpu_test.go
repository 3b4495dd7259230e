//go:build cuda

package cuda

import (
	"os"
	"testing"
)

// openGPU returns the first GPU, or skips (saying why) where there is none. HOLDGO_REQUIRE_GPU=1
// turns the skip into a failure, for runs on a GPU machine that must not pass vacuously.
func openGPU(tb testing.TB) *Device {
	tb.Helper()
	dev, err := Open(0)
	if err != nil {
		if os.Getenv("HOLDGO_REQUIRE_GPU") == "1" {
			tb.Fatalf("no GPU: %v", err)
		}
		tb.Skipf("no GPU: %v", err)
	}
	return dev
}

// The kernel suite on a real GPU: the committed PTX, JIT-compiled by the driver, and cuBLAS for
// MatMul, against the same Go references as the host shim.
func TestGPUKernels(t *testing.T) {
	dev := openGPU(t)
	t.Logf("device: %s", dev.be.(*driver).DeviceName())
	runKernelSuite(t, dev)
	// The tiled SGEMM kernel too (the suite's MatMul ran on cuBLAS).
	dev.gemm = nil
	s := &suite{t: t, dev: dev}
	s.rng = newSuiteRNG()
	t.Run("hg_sgemm", s.matmul)
	t.Logf("pool: %+v", dev.PoolStats())
}
