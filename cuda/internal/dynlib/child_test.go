//go:build !cuda && !dynlib

package dynlib

import (
	"testing"

	"holdgo/cuda/internal/dynlib/dynlibtest"
)

// The dlopen wrapper uses cgo, which the default build leaves out: its tests (dl_test.go) run in
// a child go test with -tags dynlib, so that ordinary CI runs them too.
func TestLoaderWithFakeLibraries(t *testing.T) {
	dynlibtest.Child(t, "TestLoadOrder", "TestLoadNothingUsable", "TestOpenAlt", "TestOpenPreload")
}
