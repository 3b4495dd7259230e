//go:build !cuda && !nccldl

package nccl

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The loader itself uses cgo, which the default build leaves out: this test runs its tests
// (load_test.go: fake libraries built with gcc, no GPU or NCCL needed) in a child go test with
// -tags nccldl, so that ordinary CI, which builds without tags, runs them too.
func TestLoaderWithFakeLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the child go test takes a few seconds")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		if goBin, err = exec.LookPath(filepath.Join(os.Getenv("GOROOT"), "bin", "go")); err != nil {
			t.Skip("no go command: run go test -tags nccldl ./cuda/internal/nccl")
		}
	}
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc: the loader test builds its fake libraries with gcc")
	}
	cmd := exec.Command(goBin, "test", "-count=1", "-tags", "nccldl", "-run", "TestLoad|TestCalls", "-v", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test -tags nccldl: %v\n%s", err, out)
	}
	for _, name := range []string{"TestLoadOrder", "TestLoadNothingUsable", "TestCalls"} {
		if !strings.Contains(string(out), "--- PASS: "+name) {
			t.Errorf("child run did not pass %s:\n%s", name, out)
		}
	}
	t.Logf("go test -tags nccldl:\n%s", out)
}
