//go:build cudashim

package cuda

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"holdgo/cuda/internal/shim"
	"holdgo/kernels"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// The kernel suite on the host shim: the CUDA C sources of kernels/ compiled as C++ and run on the
// CPU, behind this package's real launch glue and memory pool.
func TestShimKernels(t *testing.T) {
	be := &shim.Backend{}
	dev := NewDevice(be)
	runKernelSuite(t, dev)
	// Every kernel of the PTX must be registered in the shim and have been run by the suite (by the
	// whole suite: with -run naming subtests, as scripts/mutations.py does, only registration).
	whole := !strings.Contains(flag.Lookup("test.run").Value.String(), "/")
	mods, err := kernels.PTX(kernels.Archs[0])
	if err != nil {
		t.Fatal(err)
	}
	registered := shim.Kernels()
	for mod, src := range mods {
		for _, name := range kernels.Entries(src) {
			if !slices.Contains(registered, name) {
				t.Errorf("kernel %s (%s.cu) is not registered in the host shim", name, mod)
			} else if whole && be.Launches[name] == 0 {
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
	for _, name := range []string{"exp", "softmax", "hold perturb", "lt_step fused", "lt_step unfused", "sgemm kernel", "conv2d grad weight", "group norm backward", "gn+silu backward", "fused Lie–Trotter step"} {
		if !strings.Contains(sb.String(), name) {
			t.Errorf("bench table lacks %q:\n%s", name, sb.String())
		}
	}
	t.Log("\n" + sb.String())
}

// shimTableTol is the backend table's tolerance on the shim (normalised MSE).
const shimTableTol = 1e-10

// The backend table (tensor/optest) on the shim device: every case of every op against
// tensor.Reference, and the supported-ops matrix, which must cover every op the ncsnpp-tiny and
// toy-MLP tapes record (forward and backward).
func TestShimBackendTable(t *testing.T) {
	dev := NewDevice(&shim.Backend{})
	dev.ConvChunkBytes = 4 << 10 // several chunks per convolution
	// float32 kernels against float64 references on these sizes reach normalised MSEs of 1e-13 at
	// worst, so 1e-10 still fails on a 0.1 % change of any term (measured: worst 1.1e-13, Sum).
	rows := optest.Matrix(dev, shimTableTol)
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

// The gradient mode of the backend table on the shim device: every differentiable op's backward
// pass, run on the device, against Richardson-extrapolated finite differences of the Reference's
// float64-accurate forward pass (optest.RunGrad; a 0.1 % error of a backward rule fails it).
func TestShimGradients(t *testing.T) {
	dev := NewDevice(&shim.Backend{})
	dev.ConvChunkBytes = 4 << 10
	optest.CheckGrad(t, dev, "shim")
}

// trafficBackend counts the host↔device traffic and synchronisations of the shim.
type trafficBackend struct {
	*shim.Backend
	htod, dtoh, syncs int
}

func (b *trafficBackend) CopyHtoD(dst uintptr, src unsafe.Pointer, bytes int) error {
	b.htod++
	return b.Backend.CopyHtoD(dst, src, bytes)
}

func (b *trafficBackend) CopyDtoH(dst unsafe.Pointer, src uintptr, bytes int) error {
	b.dtoh++
	return b.Backend.CopyDtoH(dst, src, bytes)
}

func (b *trafficBackend) Sync() error { b.syncs++; return b.Backend.Sync() }

// Every op the ncsnpp-tiny and toy-MLP tapes record runs without host↔device copies or
// synchronisation beyond the uploads of its operands: filters and chunk geometry travel as kernel
// parameters, scratch comes from the pool. (Gather and ScatterAdd, which upload their index list,
// are not on these tapes.)
func TestShimOpsDoNoHostTraffic(t *testing.T) {
	be := &trafficBackend{Backend: &shim.Backend{}}
	dev := NewDevice(be)
	dev.ConvChunkBytes = 4 << 10
	var need []tensor.OpKind
	for _, kinds := range tapes(t) {
		need = append(need, kinds...)
	}
	for _, c := range optest.Cases() {
		if !slices.Contains(need, c.Kind) {
			continue
		}
		be.htod, be.dtoh, be.syncs = 0, 0, 0
		uploads := 0
		out := c.Run(tensor.NewRNG(7), func(x *tensor.Tensor) *tensor.Tensor {
			if x.Len() > 0 {
				uploads++
			}
			y, err := x.ToDevice(dev)
			if err != nil {
				t.Fatal(err)
			}
			return y
		})
		if err := out.Err(); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if be.htod != uploads || be.dtoh != 0 || be.syncs != 0 {
			t.Errorf("%s: %d host→device copies (operands: %d), %d device→host, %d synchronisations", c.Name, be.htod, uploads, be.dtoh, be.syncs)
		}
	}
}

// The per-layer convolution table on the shim (holdctl bench conv's plumbing; CPU times mean
// nothing): every pass on every path is timed once per shape, and the table prints them.
func TestShimBenchConvs(t *testing.T) {
	be := &shim.Backend{}
	dev := NewDevice(be)
	shapes := []ConvGeom{{N: 1, C: 3, H: 6, W: 6, O: 4, K: 3, S: 1, P: 1}, {N: 2, C: 4, H: 5, W: 5, O: 3, K: 3, S: 2, P: 1}}
	cells, err := BenchConvs(dev, shapes, []int{2, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != len(shapes)*len(ConvPasses)*len(ConvPaths) {
		t.Fatalf("%d cells", len(cells))
	}
	for _, c := range cells {
		if !(c.Seconds > 0) || !(c.TFLOPs > 0) {
			t.Errorf("cell %+v", c)
		}
	}
	var sb strings.Builder
	WriteConvTable(&sb, cells, 494.7)
	for _, want := range []string{"implicit tf32", "implicit bf16", "weight grad", "per training step", "% TF32", "% BF16"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, sb.String())
		}
	}
	if dev.Im2colConv || dev.TF32Convs || dev.StrictFP32 || dev.BF16 {
		t.Error("BenchConvs left the device's convolution settings changed")
	}
	for _, k := range []string{"hg_im2col", "hg_conv_fwd_f32_64", "hg_conv_dgrad_tf32_64", "hg_conv_wgrad_bf16_64"} {
		if be.Launches[k] == 0 {
			t.Errorf("no path ran %s", k)
		}
	}
	// bench conv --tiles: both tiles of every pass in TF32 and BF16, a table entry each.
	before := be.Launches["hg_conv_wgrad_bf16_128"]
	table, tt, err := TuneConvTiles(dev, shapes, []int{2, 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(tt) != len(shapes)*3*2 || len(table.Tiles) != len(tt) || table.GPU != "shim" || table.Kernels != ConvKernelsHash() {
		t.Errorf("tile table %+v from %d timings", table, len(tt))
	}
	for _, x := range tt {
		if !(x.Seconds64 > 0) || !(x.Seconds128 > 0) || table.Tiles[ConvTileKey(x.Geom, slices.Index(ConvPasses, x.Pass), x.Precision)] != x.Chosen {
			t.Errorf("timing %+v", x)
		}
	}
	if be.Launches["hg_conv_wgrad_bf16_128"] == before {
		t.Error("the 128 tile was not timed")
	}
	sb.Reset()
	WriteTileSummary(&sb, tt)
	if !strings.Contains(sb.String(), "with the shape rule") {
		t.Errorf("tile summary:\n%s", sb.String())
	}
	if dev.ConvTile != 0 || dev.Tiles != nil || dev.BF16 || dev.TF32Convs {
		t.Error("TuneConvTiles left the device's settings changed")
	}
}
