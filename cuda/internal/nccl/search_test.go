package nccl

import (
	"path/filepath"
	"testing"

	"holdgo/cuda/internal/dynlib/dynlibtest"
)

// NCCL's search: $HOLDGO_NCCL, the bare libnccl.so.2, then libnccl.so.2 in the folders, the
// nvidia-nccl wheels' among them (their order is dynlib's, tested there).
func TestDefaultSearch(t *testing.T) {
	wheel := dynlibtest.Wheel(t, "nccl")
	t.Setenv(EnvVar, "/opt/mine/libnccl.so.2")
	c := DefaultSearch().Candidates()
	dynlibtest.InOrder(t, c[:2], "/opt/mine/libnccl.so.2", "libnccl.so.2")
	dynlibtest.InOrder(t, c, filepath.Join(wheel, "libnccl.so.2"))
}

func TestVersionString(t *testing.T) {
	for code, want := range map[int]string{22105: "2.21.5", 21803: "2.18.3", 2804: "2.8.4", 2708: "2.7.8"} {
		if got := VersionString(code); got != want {
			t.Errorf("VersionString(%d) = %s, want %s", code, got, want)
		}
	}
}
