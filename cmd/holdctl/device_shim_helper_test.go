//go:build cudashim && !cuda

package main

import (
	"testing"

	"holdgo/cuda"
)

// testBackend is the host shim, which --device cuda opens in this build.
func testBackend(testing.TB) cuda.Backend { return cuda.NewShimBackend() }
