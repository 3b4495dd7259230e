//go:build cudashim

package cuda

import (
	"slices"
	"strings"
	"testing"

	"holdgo/cuda/internal/shim"
	"holdgo/kernels"
	"holdgo/tensor/optest"
)

// The kernel suite on the host shim: the CUDA C sources of kernels/ compiled as C++ and run on the
// CPU, behind this package's real launch glue and memory pool.
func TestShimKernels(t *testing.T) {
	be := &shim.Backend{}
	dev := NewDevice(be)
	runKernelSuite(t, dev)
	// Every kernel of the PTX must be registered in the shim and have been run by the suite.
	mods, err := kernels.PTX(kernels.Archs[0])
	if err != nil {
		t.Fatal(err)
	}
	registered := shim.Kernels()
	for mod, src := range mods {
		for _, name := range kernels.Entries(src) {
			if !slices.Contains(registered, name) {
				t.Errorf("kernel %s (%s.cu) is not registered in the host shim", name, mod)
			} else if be.Launches[name] == 0 {
				t.Errorf("kernel %s (%s.cu) was not exercised by the suite", name, mod)
			}
		}
	}
	t.Logf("shim: %d kernels, launches %v, pool %+v", len(registered), be.Launches, dev.PoolStats())
}

// The benchmark driver of 'holdctl bench kernels' on the shim, at toy sizes: every workload runs
// and is reported (the times are CPU times and mean nothing).
func TestShimBenchDriver(t *testing.T) {
	dev := NewDevice(&shim.Backend{})
	res, err := BenchKernels(dev, BenchOptions{Elements: 1 << 12, GemmSize: 70, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	WriteBenchTable(&sb, dev, res)
	for _, name := range []string{"exp", "softmax", "hold perturb", "lt_step fused", "lt_step unfused", "sgemm kernel", "fused Lie–Trotter step"} {
		if !strings.Contains(sb.String(), name) {
			t.Errorf("bench table lacks %q:\n%s", name, sb.String())
		}
	}
	t.Log("\n" + sb.String())
}

// The backend table (tensor/optest) on the shim device: every case of every op against
// tensor.Reference, and the supported-ops matrix, which must cover every op the ncsnpp-tiny and
// toy-MLP tapes record (forward and backward).
func TestShimBackendTable(t *testing.T) {
	dev := NewDevice(&shim.Backend{})
	dev.ConvChunkBytes = 4 << 10 // several chunks per convolution
	rows := optest.Matrix(dev, tolReduce)
	var sb strings.Builder
	optest.WriteMatrix(&sb, "shim", rows)
	t.Log("supported ops on the shim device:\n" + sb.String())
	for _, r := range rows {
		if r.Passed != r.Cases {
			t.Errorf("%v: %d of %d cases pass (%d unsupported): %s", r.Kind, r.Passed, r.Cases, r.Unsupported, r.FirstError)
		}
	}
	for name, kinds := range tapes(t) {
		if missing := optest.Missing(rows, kinds); len(missing) > 0 {
			t.Errorf("the %s tape records ops the CUDA device cannot run: %v", name, missing)
		}
	}
}
