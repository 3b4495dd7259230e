package cuda

import (
	"strings"
	"testing"

	"holdgo/kernels"
)

// TestKernelParams checks the committed PTX of every architecture against the typed launchers
// (launch_gen.go), as the device does when it loads the modules, and that a changed parameter
// is caught.
func TestKernelParams(t *testing.T) {
	for _, arch := range kernels.Archs {
		mods, err := kernels.PTX(arch)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkKernelParams(mods); err != nil {
			t.Errorf("sm_%d: %v", arch, err)
		}
	}
	mods, err := kernels.PTX(kernels.Archs[0])
	if err != nil {
		t.Fatal(err)
	}
	// hg_fill(int n, float v, float* y): make v a double, as if the C had changed without make ptx.
	mods["elementwise"] = strings.Replace(mods["elementwise"], ".param .f32 hg_fill_param_1", ".param .f64 hg_fill_param_1", 1)
	if err := checkKernelParams(mods); err == nil || !strings.Contains(err.Error(), "hg_fill") {
		t.Errorf("a stale hg_fill signature was not reported: %v", err)
	}
}
