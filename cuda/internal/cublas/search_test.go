package cublas

import (
	"path/filepath"
	"testing"

	"holdgo/cuda/internal/dynlib/dynlibtest"
)

// cuBLAS's search: $HOLDGO_CUBLAS, the bare libcublas.so.13, and each major version, newest first,
// in the folders, the nvidia-cublas wheels' among them (their order is dynlib's, tested there).
func TestDefaultSearch(t *testing.T) {
	wheel := dynlibtest.Wheel(t, "cublas")
	t.Setenv(EnvVar, "/opt/mine/libcublas.so.12")
	c := DefaultSearch().Candidates()
	dynlibtest.InOrder(t, c[:2], "/opt/mine/libcublas.so.12", "libcublas.so.13")
	dynlibtest.InOrder(t, c, filepath.Join(wheel, "libcublas.so.13"), "libcublas.so.12",
		filepath.Join(wheel, "libcublas.so.12"), "libcublas.so.11", filepath.Join(wheel, "libcublas.so.11"))
}
