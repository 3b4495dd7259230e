package nccl

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDefaultSearch(t *testing.T) {
	venv := t.TempDir()
	wheel := filepath.Join(venv, "lib", "python3.12", "site-packages", "nvidia", "nccl", "lib")
	if err := os.MkdirAll(wheel, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, "/opt/mine/libnccl.so.2")
	t.Setenv("VIRTUAL_ENV", venv)
	t.Setenv("CONDA_PREFIX", "/opt/env")
	t.Setenv("CUDA_HOME", "/opt/cuda")
	c := DefaultSearch().Candidates()
	if c[0] != "/opt/mine/libnccl.so.2" || c[1] != "libnccl.so.2" {
		t.Errorf("candidates start %q, want $%s then the bare soname", c[:2], EnvVar)
	}
	for _, want := range []string{"/opt/cuda/lib64/libnccl.so.2", filepath.Join(wheel, "libnccl.so.2"), "/opt/env/lib/libnccl.so.2"} {
		if !slices.Contains(c, want) {
			t.Errorf("candidates lack %s: %q", want, c)
		}
	}
}

func TestVersionString(t *testing.T) {
	for code, want := range map[int]string{22105: "2.21.5", 21803: "2.18.3", 2804: "2.8.4", 2708: "2.7.8"} {
		if got := VersionString(code); got != want {
			t.Errorf("VersionString(%d) = %s, want %s", code, got, want)
		}
	}
}
