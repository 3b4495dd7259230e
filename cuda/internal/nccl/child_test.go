//go:build !cuda && !dynlib

package nccl

import (
	"testing"

	"holdgo/cuda/internal/dynlib/dynlibtest"
)

// The loader itself uses cgo, which the default build leaves out: its tests (load_test.go: fake
// libraries built with gcc, no GPU or NCCL needed) run in a child go test with -tags dynlib, so
// that ordinary CI runs them too.
func TestLoaderWithFakeLibraries(t *testing.T) {
	dynlibtest.Child(t, "TestLoad", "TestCalls")
}
