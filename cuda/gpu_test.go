//go:build cuda

package cuda

import (
	"os"
	"testing"

	"holdgo/tensor"
	"holdgo/tensor/optest"
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
	s := &suite{t: t, dev: dev, rng: newSuiteRNG()}
	t.Run("hg_sgemm", func(t *testing.T) { s.table(t, tensor.OpMatMul) })
	t.Logf("pool: %+v", dev.PoolStats())
}

// The gradient mode of the backend table on a real GPU in strict FP32 (TF32's relative error of
// about 1e-3 is above the mode's tolerance).
func TestGPUGradients(t *testing.T) {
	dev := openGPU(t)
	dev.StrictFP32 = true
	defer func() { dev.StrictFP32 = false }()
	optest.CheckGrad(t, dev, "strict FP32")
}

// The backend table (tensor/optest) on a real GPU: in strict FP32 against the reference at the
// shim's tolerance, then in the default TF32 tensor-core mode, whose 10-bit mantissa products
// leave GEMMs and convolutions at a relative error of about 1e-3 (normalised MSE up to ~1e-5).
func TestGPUBackendTable(t *testing.T) {
	dev := openGPU(t)
	dev.StrictFP32 = true
	optest.Check(t, dev, "strict FP32", tolReduce)
	dev.StrictFP32 = false
	optest.Check(t, dev, "TF32", 1e-4)
	for name, kinds := range tapes(t) {
		if missing := optest.Missing(optest.Matrix(dev, 1e-4), kinds); len(missing) > 0 {
			t.Errorf("the %s tape records ops the GPU device cannot run: %v", name, missing)
		}
	}
}
