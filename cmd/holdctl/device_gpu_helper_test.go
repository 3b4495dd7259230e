//go:build cuda

package main

import (
	"os"
	"testing"

	"holdgo/cuda"
)

// testBackend is the first GPU, which --device cuda opens in this build. The comparisons with the
// CPU want strict FP32 GEMMs: run them with NVIDIA_TF32_OVERRIDE=0 (make gpu-check does), which
// turns off cuBLAS's TF32 mode for the CLI's devices too. Without a GPU the test is skipped, or
// fails where HOLDGO_REQUIRE_GPU=1.
func testBackend(tb testing.TB) cuda.Backend {
	tb.Helper()
	dev, err := cuda.Open(0)
	if err != nil {
		if os.Getenv("HOLDGO_REQUIRE_GPU") == "1" {
			tb.Fatalf("no GPU: %v", err)
		}
		tb.Skipf("no GPU: %v", err)
	}
	return dev.Backend()
}
