package cuda

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"holdgo/dist"
	"holdgo/tensor"
)

// byteCase is one launch of a kernel on a small shape and its bytes counted by hand.
type byteCase struct {
	kernel      string
	launch      func(d *Device) error
	read, write int64
}

// at0 is a device address for the launches below (the fake backend does not read it; float64
// pointers must be 8-byte aligned).
const at0 = uintptr(1 << 20)

// byteCases: at least one per kernel; the counts are worked out in the comments from the kernels'
// loops (kernels/*.cu) and the rule of bytemodel.go.
var byteCases = append(convByteCases(), []byteCase{
	{"hg_fill", func(d *Device) error { return d.hgFill(grid1D(9), 9, 1, at0) }, 0, 36},
	{"hg_unary", func(d *Device) error { return d.hgUnary(grid1D(10), 10, 0, 0, at0, at0+64) }, 40, 40},
	{"hg_binary", func(d *Device) error { return d.hgBinary(grid1D(7), 7, 0, at0, at0+64, at0+128) }, 56, 28},
	{"hg_binary", func(d *Device) error { return d.hgBinary(grid1D(7), 7, 0, at0, at0, at0+128) }, 28, 28}, // x·x reads x once
	// (3,1,5) + (4,5) → (3,4,5): a covers 3·5, b 4·5 elements; y 60.
	{"hg_binary_bcast", func(d *Device) error {
		return d.hgBinaryBcast(grid1D(60), 60, 0, [maxRank]int{1, 1, 1, 3, 4, 5}, [maxRank]int{0, 0, 0, 5, 0, 1},
			[maxRank]int{0, 0, 0, 0, 5, 1}, at0, at0+256, at0+512, [maxRank]int{}, [maxRank]int{})
	}, 4 * 35, 4 * 60},
	// a 2×3 transpose: 6 read, 6 written; accumulating reads the destination too.
	{"hg_strided_copy", func(d *Device) error {
		return d.hgStridedCopy(grid1D(6), 6, 0, [maxRank]int{1, 1, 1, 1, 2, 3}, [maxRank]int{0, 0, 0, 0, 1, 2},
			[maxRank]int{0, 0, 0, 0, 3, 1}, at0, at0+64, [maxRank]int{}, [maxRank]int{})
	}, 24, 24},
	{"hg_strided_copy", func(d *Device) error {
		return d.hgStridedCopy(grid1D(6), 6, 1, [maxRank]int{1, 1, 1, 1, 2, 3}, [maxRank]int{0, 0, 0, 0, 1, 2},
			[maxRank]int{0, 0, 0, 0, 3, 1}, at0, at0+64, [maxRank]int{}, [maxRank]int{})
	}, 48, 24},
	// 3 rows of 4: the index list (3 ints), 12 elements read (and 12 of y for scatter), 12 written.
	{"hg_gather_rows", func(d *Device) error { return d.hgGatherRows(grid1D(12), 3, 4, at0, at0+64, at0+128) }, 12 + 48, 48},
	{"hg_scatter_rows", func(d *Device) error { return d.hgScatterRows(grid1D(4), 3, 4, at0, at0+64, at0+128) }, 12 + 96, 48},
	// im2col of x (2, 3, 5, 5), 3×3, padding 1: every pixel is read, 2·3·9·25 column entries written.
	{"hg_im2col", func(d *Device) error {
		return d.hgIm2col(grid1D(1350), 2, 3, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5, 5, 27*25, 25, at0, at0+1024)
	}, 4 * 2 * 3 * 25, 4 * 2 * 3 * 9 * 25},
	// x (1, 2, 6, 6), 3×3, stride 2, no padding → 2×2: rows 2o+k ∈ {0…4} (5 of 6), likewise columns.
	{"hg_im2col", func(d *Device) error {
		return d.hgIm2col(grid1D(72), 1, 2, 6, 6, 3, 3, 0, 0, 2, 2, 1, 1, 2, 2, 18*4, 4, at0, at0+1024)
	}, 4 * 2 * 5 * 5, 4 * 2 * 9 * 4},
	// The implicit convolutions, every variant with the same counts. x (2, 3, 5, 5), w (4, 3, 3, 3),
	// padding 1 → y (2, 4, 5, 5): forward with a per-channel bias reads 150 + 108 + 4, writes 200.
	// Input gradient, β = 0.5: reads dy 200 + w 108 + dx 150, writes dx 150. Weight gradient in 3
	// splits: reads x 150 + dy 200, writes 3 partials of 108; in one split with β = 0.5 it reads dw too
	// and writes it once.
	{"hg_conv_splitk", func(d *Device) error { return d.hgConvSplitk(grid1D(108), 108, 3, 0.5, at0, at0+4096, 0, 0) }, 4 * (324 + 108), 4 * 108},
	// 10 elements: a and b read, y written.
	{"hg_add_scaled", func(d *Device) error { return d.hgAddScaled(grid1D(10), 10, 0.5, at0, at0+64, at0+128) }, 80, 40},
	// with the bias gradient of 4 channels: 3 splits' sums (12) and db (4) read, db written.
	{"hg_conv_splitk", func(d *Device) error {
		return d.hgConvSplitk(grid1D(112), 108, 3, 0, at0, at0+4096, 4, at0+8192)
	}, 4 * (324 + 12 + 4), 4 * (108 + 4)},
	{"hg_warp_mma_tf32", func(d *Device) error { return d.hgWarpMmaTf32([3]int{1, 1, 1}, at0, at0+4096, at0+8192) }, 4 * (1024 + 512 + 1024), 4 * 1024},
	{"hg_warp_mma_bf16", func(d *Device) error { return d.hgWarpMmaBf16([3]int{1, 1, 1}, at0, at0+8192, at0+16384) }, 4 * (2048 + 1024 + 1024), 4 * 1024},
	// 1×1, stride 2 on 4×4 → 2×2: rows {0, 2}, columns {0, 2}.
	{"hg_im2col", func(d *Device) error {
		return d.hgIm2col(grid1D(4), 1, 1, 4, 4, 1, 1, 0, 0, 2, 2, 1, 1, 2, 2, 4, 4, at0, at0+1024)
	}, 4 * 4, 4 * 4},
	// col2im of the first im2col: per axis 5 outputs × 3 taps less the two that fall on the
	// padding = 13 pairs, so 2·3·13·13 entries read; x (150) written, and read with β ≠ 0.
	{"hg_col2im", func(d *Device) error {
		return d.hgCol2im(grid1D(150), 2, 3, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5, 5, 0, at0, at0+8192)
	}, 4 * 6 * 169, 4 * 150},
	{"hg_col2im", func(d *Device) error {
		return d.hgCol2im(grid1D(150), 2, 3, 5, 5, 3, 3, 1, 1, 1, 1, 1, 1, 5, 5, 0.5, at0, at0+8192)
	}, 4 * (6*169 + 150), 4 * 150},
	// the strided im2col's adjoint: 2 outputs × 3 taps, all inside: 2·36 entries.
	{"hg_col2im", func(d *Device) error {
		return d.hgCol2im(grid1D(72), 1, 2, 6, 6, 3, 3, 0, 0, 2, 2, 1, 1, 2, 2, 0, at0, at0+8192)
	}, 4 * 2 * 36, 4 * 72},
	// y (2, 4, 25) += bias (4).
	{"hg_conv_bias", func(d *Device) error { return d.hgConvBias(grid1D(200), 2, 4, 25, at0, at0+64) }, 4 * 204, 4 * 200},
	// group norm of x (2, 4, 3), 2 groups: T = 24 elements, C = 4, N·G = 4 groups. The forward
	// kernels read x twice (statistics, output), once from a shared-memory cache, and γ, β (8).
	{"hg_group_norm", func(d *Device) error {
		return d.hgGroupNorm(gridRows(4), 0, 2, 4, 3, 2, 1e-5, 0, at0, at0+128, at0+256, at0+384, at0+512, at0+640)
	}, 4 * (48 + 8), 4 * (24 + 8)},
	{"hg_group_norm", func(d *Device) error {
		return d.hgGroupNorm(gridRows(4), 24, 2, 4, 3, 2, 1e-5, 1, at0, at0+128, at0+256, at0+384, at0+512, at0+640)
	}, 4 * (24 + 8), 4 * (24 + 8)},
	{"hg_group_norm_silu", func(d *Device) error {
		return d.hgGroupNormSilu(gridRows(4), 0, 2, 4, 3, 2, 1e-5, 0, at0, at0+128, at0+256, at0+384)
	}, 4 * (48 + 8), 4 * 24},
	{"hg_group_norm_silu", func(d *Device) error {
		return d.hgGroupNormSilu(gridRows(4), 24, 2, 4, 3, 2, 1e-5, 1, at0, at0+128, at0+256, at0+384)
	}, 4 * (24 + 8), 4 * 24},
	// The backward kernel writes dx (24) and the partials (2, N, C) = 16. Cached x and dy: each
	// read once, and γ (4); the SiLU backward without a cache, accumulating into dx: x three times,
	// dy twice, γ and β, dx; x cached alone: x once, dy twice, γ.
	{"hg_group_norm_backward", func(d *Device) error {
		return d.hgGroupNormBackward(gridRows(4), 48, 2, 4, 3, 2, 1e-5, 0, 0, 2, at0, at0+128, at0+256, at0+384, at0+512, at0+640)
	}, 4 * (48 + 4), 4 * (24 + 16)},
	{"hg_group_norm_backward", func(d *Device) error {
		return d.hgGroupNormBackward(gridRows(4), 0, 2, 4, 3, 2, 1e-5, 1, 0.5, 0, at0, at0+128, at0+256, at0+384, at0+512, at0+640)
	}, 4 * (120 + 8 + 24), 4 * (24 + 16)},
	{"hg_group_norm_backward", func(d *Device) error {
		return d.hgGroupNormBackward(gridRows(4), 24, 2, 4, 3, 2, 1e-5, 0, 0, 1, at0, at0+128, at0+256, at0+384, at0+512, at0+640)
	}, 4 * (72 + 4), 4 * (24 + 16)},
	// The fused dropout kernels count as hg_group_norm_silu and the SiLU backward (the mask reads
	// nothing). Forward: x twice or once cached, γ and β (8); y (24) written. Backward with cached
	// x and dy: each read once, γ and β; accumulating into dx without a cache: x three times, dy
	// twice, γ, β, dx.
	{"hg_group_norm_silu_dropout", func(d *Device) error {
		return d.hgGroupNormSiluDropout(gridRows(4), 0, 2, 4, 3, 2, 1e-5, 0, 5, 1, 2, 3, 0.1, 1/0.9, at0, at0+128, at0+256, at0+384)
	}, 4 * (48 + 8), 4 * 24},
	{"hg_group_norm_silu_dropout", func(d *Device) error {
		return d.hgGroupNormSiluDropout(gridRows(4), 24, 2, 4, 3, 2, 1e-5, 1, 5, 1, 2, 3, 0.1, 1/0.9, at0, at0+128, at0+256, at0+384)
	}, 4 * (24 + 8), 4 * 24},
	{"hg_group_norm_silu_dropout_backward", func(d *Device) error {
		return d.hgGroupNormSiluDropoutBackward(gridRows(4), 48, 2, 4, 3, 2, 1e-5, 0, 2, 5, 1, 2, 3, 0.1, 1/0.9,
			at0, at0+128, at0+256, at0+384, at0+512, at0+640)
	}, 4 * (48 + 8), 4 * (24 + 16)},
	{"hg_group_norm_silu_dropout_backward", func(d *Device) error {
		return d.hgGroupNormSiluDropoutBackward(gridRows(4), 0, 2, 4, 3, 2, 1e-5, 0.5, 0, 5, 1, 2, 3, 0.1, 1/0.9,
			at0, at0+128, at0+256, at0+384, at0+512, at0+640)
	}, 4 * (120 + 8 + 24), 4 * (24 + 16)},
	// the batch sums of those partials: 2·2·4 read with dγ and dβ (8), which are written.
	{"hg_group_norm_param_sum", func(d *Device) error {
		return d.hgGroupNormParamSum(grid1D(4), 2, 4, at0, at0+128, at0+256)
	}, 4 * (16 + 8), 4 * 8},
	// softmax of 3 rows of 5: x three times / y and dy twice.
	{"hg_softmax_fwd", func(d *Device) error { return d.hgSoftmaxFwd(gridRows(3), 3, 5, 1, at0, at0+64) }, 4 * 45, 4 * 15},
	{"hg_softmax_bwd", func(d *Device) error { return d.hgSoftmaxBwd(gridRows(3), 3, 5, 1, at0, at0+64, at0+128) }, 4 * 60, 4 * 15},
	{"hg_reduce_rows", func(d *Device) error { return d.hgReduceRows(gridRows(3), 3, 5, reduceSum, at0, at0+64) }, 4 * 15, 4 * 3},
	{"hg_reduce_cols", func(d *Device) error { return d.hgReduceCols(grid1D(8), 2, 3, 4, reduceSum, at0, at0+128) }, 4 * 24, 4 * 8},
	// FIR upsampling of (2, 4, 4) to 8×8 (pad 2): every input pixel is read.
	{"hg_upfirdn2d_sep", func(d *Device) error {
		return d.hgUpfirdn2dSep(grid1D(128), 2, 4, 4, 2, 1, 2, 8, 8, 1, 3, 3, 1, 1, at0, at0+256)
	}, 4 * 2 * 16, 4 * 2 * 64},
	// FIR downsampling of an 8×8 plane to 2×2 without padding: rows 2o+j for o < 2, j < 4 = {0…5}.
	{"hg_upfirdn2d_sep", func(d *Device) error {
		return d.hgUpfirdn2dSep(grid1D(4), 1, 8, 8, 1, 2, 0, 2, 2, 1, 3, 3, 1, 1, at0, at0+256)
	}, 4 * 36, 4 * 4},
	{"hg_philox_normal", func(d *Device) error { return d.hgPhiloxNormal(grid1D(10), 10, 0, 1, 2, 3, at0) }, 0, 40},
	{"hg_philox_uniform", func(d *Device) error { return d.hgPhiloxUniform(grid1D(10), 10, 1, 2, 3, at0) }, 0, 40},
	{"hg_dropout", func(d *Device) error { return d.hgDropout(grid1D(10), 10, 0, 1, 2, 3, 0.1, 1/0.9, at0, at0+64) }, 40, 40},
	// the training step: 100 outputs and targets, one block.
	{"hg_score_loss", func(d *Device) error { return d.hgScoreLoss(gridFlat(100), 100, 4, at0, at0+512, at0+1024, at0+2048) }, 800, 400 + 8},
	{"hg_sumsq", func(d *Device) error { return d.hgSumsq(gridFlat(100), 100, at0, at0+512) }, 400, 8},
	{"hg_finish", func(d *Device) error { return d.hgFinish(gridRows(1), 3, at0, 1, at0+64, 1) }, 24, 8},
	{"hg_clip_adam", func(d *Device) error {
		return d.hgClipAdam(gridFlat(10), 10, 0.9, 0.999, 1e-8, 1e-3, 1, 1, at0, at0+64, at0+128, at0+192, at0+256)
	}, 16 + 4*4*10, 4 * 3 * 10},
	{"hg_ema_guard", func(d *Device) error { return d.hgEmaGuard(gridFlat(10), 10, 0.001, at0, at0+64, at0+128) }, 16 + 4*2*10, 4 * 10},
	// HOLD-3 perturbation of B = 2 samples of d = 5: coefficients 2·32 doubles, q0 (10), ε (30),
	// aux (2·2·5 = 20) read; x (30) and the target (10) written.
	{"hg_hold_perturb", func(d *Device) error {
		return d.hgHoldPerturb(grid1D(10), 2, 3, 5, at0, at0+1024, at0+2048, at0+3072, at0+4096, at0+5120)
	},
		8*64 + 4*(10+30+20), 4 * 40},
	{"hg_hold_perturb", func(d *Device) error {
		return d.hgHoldPerturb(grid1D(10), 2, 3, 5, at0, at0+1024, at0+2048, 0, at0+4096, at0+5120)
	},
		8*64 + 4*(10+30), 4 * 40},
	// time embeddings of 4 times, half 3: t (and the 3 Fourier weights); 4·6 written.
	{"hg_time_embed", func(d *Device) error { return d.hgTimeEmbed(grid1D(12), 4, 3, 0, 0, at0, at0+64, at0+128) }, 4 * (4 + 3), 4 * 24},
	{"hg_time_embed", func(d *Device) error { return d.hgTimeEmbed(grid1D(12), 4, 3, 1, 0.1, at0, at0, at0+128) }, 4 * 4, 4 * 24},
	// sampler steps on a state (2, 3·5): 66 coefficients, x (30), score (10), z1 and z2 (30 each).
	{"hg_lt_step", func(d *Device) error {
		return d.hgLtStep(grid1D(10), 2, 3, 5, 2, at0, at0+1024, at0+2048, at0+3072, at0+4096)
	},
		8*66 + 4*(30+10+60), 4 * 30},
	{"hg_lt_step", func(d *Device) error {
		return d.hgLtStep(grid1D(10), 2, 3, 5, 1, at0, at0+1024, at0+2048, at0+3072, at0+4096)
	},
		8*66 + 4*(30+10+30), 4 * 30},
	{"hg_lt_b", func(d *Device) error { return d.hgLtB(grid1D(10), 2, 3, 5, at0, at0+1024, at0+2048) }, 8*2 + 4*(10+10), 4 * 10},
	{"hg_lt_a", func(d *Device) error { return d.hgLtA(grid1D(10), 2, 3, 5, 1, at0, at0+1024, at0+2048) }, 8*32 + 4*(30+30), 4 * 30},
	// a batch of 2 (4×3)·(3×5) products with B broadcast (stride 0): A 2·12, B 15, C 2·20; with β ≠ 0
	// C is read too.
	{"hg_sgemm", func(d *Device) error {
		return d.hgSgemm([3]int{1, 1, 2}, 4, 5, 3, 0, 0, 1, at0, 3, 12, at0+1024, 5, 0, 0, at0+2048, 5, 20)
	}, 4 * (24 + 15), 4 * 40},
	{"hg_sgemm", func(d *Device) error {
		return d.hgSgemm([3]int{1, 1, 2}, 4, 5, 3, 0, 0, 1, at0, 3, 12, at0+1024, 5, 0, 1, at0+2048, 5, 20)
	}, 4 * (24 + 15 + 40), 4 * 40},
}...)

// convByteCases are the hand counts of the eighteen implicit-convolution kernels (above).
func convByteCases() []byteCase {
	var cases []byteCase
	for pass, byPrec := range convKernels {
		for tc, byTile := range byPrec {
			for big, k := range byTile {
				name := convKernelName(pass, tc, [2]int{64, 128}[big])
				launch := func(grid [3]int, beta float32, bias int) func(d *Device) error {
					return func(d *Device) error {
						return k(d, grid, 0, 2, 3, 5, 5, 4, 3, 1, 1, 5, 5, 16, beta, bias, at0, at0+4096, at0+8192, at0+10240, 0, 0, at0+12288)
					}
				}
				switch pass {
				case convFwd:
					cases = append(cases, byteCase{name, launch([3]int{1, 1, 1}, 0, 1), 4 * (150 + 108 + 4), 4 * 200},
						byteCase{name, launch([3]int{1, 1, 1}, 0, 2), 4 * (150 + 108 + 8), 4 * 200},
						byteCase{name, launch([3]int{1, 1, 1}, 0, 3), 4 * (150 + 108 + 4 + 8), 4 * 200},
						// the residual join: r (2, 4, 5, 5) read too
						byteCase{name, func(d *Device) error {
							return k(d, [3]int{1, 1, 1}, 0, 2, 3, 5, 5, 4, 3, 1, 1, 5, 5, 16, 0, 1, at0, at0+4096, at0+8192, 0, at0+10240, 0.5, at0+12288)
						}, 4 * (150 + 108 + 4 + 200), 4 * 200})
				case convDgrad:
					cases = append(cases, byteCase{name, launch([3]int{1, 1, 1}, 0.5, 0), 4 * (200 + 108 + 150), 4 * 150})
				default:
					cases = append(cases, byteCase{name, launch([3]int{1, 1, 3}, 0, 0), 4 * (150 + 200), 4 * 3 * 108},
						byteCase{name, launch([3]int{1, 1, 1}, 0.5, 0), 4 * (150 + 200 + 108), 4 * 108},
						// with the bias gradient: db (4) read and written; in 3 splits, 3 × 4 sums written
						byteCase{name, launch([3]int{1, 1, 1}, 0, 1), 4 * (150 + 200 + 4), 4 * (108 + 4)},
						byteCase{name, launch([3]int{1, 1, 3}, 0, 1), 4 * (150 + 200), 4 * 3 * (108 + 4)})
				}
			}
		}
	}
	return cases
}

// TestByteModels checks every kernel's byte model against the hand counts of byteCases, launched
// through the typed launchers (so the argument slots are the real ones), and that every kernel
// with a launcher has a model and a case.
func TestByteModels(t *testing.T) {
	fake := newFake()
	dev := NewDevice(fake)
	covered := map[string]bool{}
	for i, c := range byteCases {
		fake.launches = nil
		if err := c.launch(dev); err != nil {
			t.Fatalf("case %d (%s): %v", i, c.kernel, err)
		}
		l := fake.launches[0]
		if l.name != c.kernel {
			t.Fatalf("case %d launched %s, want %s", i, l.name, c.kernel)
		}
		m, ok := byteModels[c.kernel]
		if !ok {
			t.Errorf("%s has no byte model", c.kernel)
			continue
		}
		if len(l.args) != m.slots {
			t.Errorf("%s: %d argument slots, the model expects %d", c.kernel, len(l.args), m.slots)
			continue
		}
		if r, w := m.bytes(l.grid, kernelArgs(l.args)); r != c.read || w != c.write {
			t.Errorf("case %d, %s: model reads %d and writes %d bytes, the hand count is %d and %d", i, c.kernel, r, w, c.read, c.write)
		}
		covered[c.kernel] = true
	}
	for name, params := range kernelParams {
		m, ok := byteModels[name]
		switch {
		case !ok:
			t.Errorf("kernel %s has no byte model (cuda/bytemodel.go)", name)
		case m.slots != len(strings.Fields(params)):
			t.Errorf("kernel %s takes %d parameters, its byte model reads %d slots", name, len(strings.Fields(params)), m.slots)
		case !covered[name]:
			t.Errorf("kernel %s has no hand-counted case in byteCases", name)
		}
	}
	for name := range byteModels {
		if _, ok := kernelParams[name]; !ok {
			t.Errorf("byte model of %s, which is no kernel", name)
		}
	}
}

// TestRecordOps runs ops on the recording device: a convolution's forward pass and input gradient
// launch what conv.go issues (the implicit kernels, and the im2col path), with the hand counts of
// byteCases, the GEMMs' FLOPs and operands, and the memsets of the outputs' allocations.
func TestRecordOps(t *testing.T) {
	dev, rec := NewRecordingDevice()
	x, _ := tensor.RandN(tensor.NewRNG(1), 2, 3, 5, 5).ToDevice(dev)
	w, _ := tensor.RandN(tensor.NewRNG(2), 4, 3, 3, 3).ToDevice(dev)
	b, _ := tensor.RandN(tensor.NewRNG(3), 4).ToDevice(dev)
	up := rec.Stats()
	if up.HtoD != 3 || up.HostSyncs != 3 || up.Memsets != 3 || up.MemsetSources["Alloc"] != 3 {
		t.Errorf("three uploads: %+v", up)
	}
	y := tensor.Conv2d(nil, x, w, b, 1, 1)
	if err := tensor.Err(y); err != nil {
		t.Fatal(err)
	}
	s := rec.Stats().Sub(up)
	// One implicit forward kernel, TF32 (a vendor GEMM is present), tile 64: x, w, the bias read
	// (150 + 108 + 4), y written (200); its FLOPs are the GEMM's, (4×27)·(27×50).
	want := RecordStats{Launches: 1, GemmFLOPs: 2 * 4 * 27 * 50, KernelBytes: 4 * (150 + 108 + 4 + 200), Memsets: 1, MemsetBytes: 800}
	if s.Launches != want.Launches || s.GemmCalls != want.GemmCalls || s.GemmFLOPs != want.GemmFLOPs || s.GemmBytes != want.GemmBytes ||
		s.KernelBytes != want.KernelBytes || s.Memsets != want.Memsets || s.MemsetBytes != want.MemsetBytes || s.HostSyncs != 0 {
		t.Errorf("Conv2d recorded %+v, want %+v", s, want)
	}
	if k := s.Kernels; k["hg_conv_fwd_tf32_64"] != (Usage{1, want.KernelBytes}) {
		t.Errorf("kernels %v", k)
	}
	dx := tensor.New(dev, 2, 3, 5, 5)
	before := rec.Stats()
	tensor.Conv2dGradInput(dx, y, w, 1, 1, 0)
	s = rec.Stats().Sub(before)
	if s.Kernels["hg_conv_dgrad_tf32_64"] != (Usage{1, 4 * (200 + 108 + 150)}) || s.GemmCalls != 0 || s.Launches != 1 ||
		s.GemmFLOPs != 2*3*50*36 {
		t.Errorf("Conv2dGradInput recorded %+v", s)
	}
	// The im2col path: im2col (600 + 5400) and the bias (816 + 800); one GEMM (4×27)·(27×25) per
	// sample, batch 2.
	dev.Im2colConv = true
	before = rec.Stats()
	tensor.Conv2d(y, x, w, b, 1, 1)
	s = rec.Stats().Sub(before)
	dev.Im2colConv = false
	want = RecordStats{Launches: 2, GemmCalls: 1, GemmFLOPs: 2 * 4 * 25 * 27 * 2, GemmBytes: 4 * (4*27 + 2*27*25 + 2*4*25),
		KernelBytes: 6000 + 1616}
	if s.Launches != want.Launches || s.GemmCalls != want.GemmCalls || s.GemmFLOPs != want.GemmFLOPs || s.GemmBytes != want.GemmBytes ||
		s.KernelBytes != want.KernelBytes || s.HostSyncs != 0 {
		t.Errorf("Conv2d on the im2col path recorded %+v, want %+v", s, want)
	}
	if f := s.Families; f["im2col"] != (Usage{1, 6000}) || f["conv-bias"] != (Usage{1, 1616}) {
		t.Errorf("families %v", f)
	}
	// Nothing ran: the output reads as zeros; a read is one host synchronisation.
	h, err := y.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(h.Data(), func(v float32) bool { return v != 0 }) {
		t.Error("a kernel's output is not zero on the recorder")
	}
	if s := rec.Stats(); s.DtoH != 1 || len(s.Unmodelled) != 0 {
		t.Errorf("after one read: %+v", s)
	}
}

// TestRecordMemory: the host's writes read back, cleared ranges read as zeros (whole and partial
// pages), device work changes nothing, and copies outside an allocation fail.
func TestRecordMemory(t *testing.T) {
	_, rec := NewRecordingDevice()
	const n = 3*recordPage + 100
	base, err := rec.Alloc(n)
	if err != nil {
		t.Fatal(err)
	}
	src := make([]byte, 2*recordPage)
	for i := range src {
		src[i] = byte(i%251 + 1)
	}
	off := uintptr(recordPage / 2) // the write straddles three pages
	if err := rec.CopyHtoD(base+off, unsafe.Pointer(&src[0]), len(src)); err != nil {
		t.Fatal(err)
	}
	read := func(at uintptr, size int) []byte {
		t.Helper()
		b := make([]byte, size)
		for i := range b {
			b[i] = 0xee
		}
		if err := rec.CopyDtoH(unsafe.Pointer(&b[0]), at, size); err != nil {
			t.Fatal(err)
		}
		return b
	}
	all := read(base, n)
	want := make([]byte, n)
	copy(want[off:], src)
	if !slices.Equal(all, want) {
		t.Fatal("the host's write does not read back (zeros around it)")
	}
	// Device work: nothing changes.
	other, _ := rec.Alloc(n)
	if err := rec.CopyDtoD(other, base, n); err != nil {
		t.Fatal(err)
	}
	if err := rec.Launch("hg_fill", [3]int{1, 1, 1}, block1D, 0, []uint64{uint64(n / 4), 0, uint64(base)}); err != nil {
		t.Fatal(err)
	}
	if got := read(base, n); !slices.Equal(got, want) {
		t.Error("a launch changed the memory")
	}
	if got := read(other, n); slices.ContainsFunc(got, func(b byte) bool { return b != 0 }) {
		t.Error("a device-to-device copy ran")
	}
	// Clear a range that covers one page whole and two in part.
	lo, hi := uintptr(recordPage-10), uintptr(2*recordPage+10)
	if err := rec.Zero(base+lo, int(hi-lo)); err != nil {
		t.Fatal(err)
	}
	clear(want[lo:hi])
	if got := read(base, n); !slices.Equal(got, want) {
		t.Error("Zero did not clear exactly its range")
	}
	// Outside an allocation (past its end, or after Free): an error.
	var b [8]byte
	if err := rec.CopyHtoD(base+n-4, unsafe.Pointer(&b[0]), 8); err == nil {
		t.Error("a copy past the allocation's end succeeded")
	}
	if err := rec.Free(base); err != nil {
		t.Fatal(err)
	}
	if err := rec.CopyDtoH(unsafe.Pointer(&b[0]), base, 8); err == nil {
		t.Error("a read of freed memory succeeded")
	}
	if err := rec.Free(base); err == nil {
		t.Error("a second Free succeeded")
	}
	if len(rec.mem.pages) != 0 {
		t.Errorf("%d pages held after Free", len(rec.mem.pages))
	}
	s := rec.Stats()
	// Host synchronisations: the copy to the device, the four reads and the Free (cuMemFree
	// synchronises the device).
	if s.HostSyncs != 6 || s.HostSyncSources["Free ← testing.tRunner"] != 1 || s.HtoD != 1 || s.DtoH != 4 || s.DtoD != 1 || s.DtoDBytes != n || s.Memsets != 1 || s.Launches != 1 ||
		s.Kernels["hg_fill"].Bytes != n/4*4 {
		t.Errorf("counts %+v", s)
	}
}

// A launch of a kernel without a byte model is reported, its bytes not counted; a launch whose
// argument slots do not match the model fails.
func TestRecordUnmodelled(t *testing.T) {
	_, rec := NewRecordingDevice()
	if err := rec.Launch("hg_new_kernel", [3]int{1, 1, 1}, block1D, 0, []uint64{1, 2}); err != nil {
		t.Fatal(err)
	}
	s := rec.Stats()
	if s.Unmodelled["hg_new_kernel"] != 1 || s.Launches != 1 || s.KernelBytes != 0 || s.Families["unmodelled"].Launches != 1 {
		t.Errorf("unmodelled launch: %+v", s)
	}
	if err := rec.Launch("hg_fill", [3]int{1, 1, 1}, block1D, 0, []uint64{1}); err == nil {
		t.Error("a launch with too few argument slots was modelled")
	}
}

// Sub and Div: the difference of two snapshots and the mean of n steps, maps included.
func TestRecordStatsArithmetic(t *testing.T) {
	a := newRecordStats()
	a.Launches, a.KernelBytes, a.HostSyncs = 10, 1000, 2
	a.Families["copy"] = Usage{10, 1000}
	a.HostSyncSources["Sync ← x"] = 2
	b := a.clone()
	b.Launches, b.KernelBytes, b.HostSyncs = 30, 3001, 2
	b.Families["copy"] = Usage{20, 2000}
	b.Families["fir"] = Usage{10, 1001}
	d := b.Sub(a)
	if d.Launches != 20 || d.KernelBytes != 2001 || d.HostSyncs != 0 || len(d.HostSyncSources) != 0 ||
		d.Families["copy"] != (Usage{10, 1000}) || d.Families["fir"] != (Usage{10, 1001}) {
		t.Errorf("Sub: %+v", d)
	}
	m := d.Div(2)
	if m.Launches != 10 || m.KernelBytes != 1001 || m.Families["fir"] != (Usage{5, 501}) || d.Families["fir"] != (Usage{10, 1001}) {
		t.Errorf("Div: %+v (and d %+v)", m, d)
	}
}

// The NCCL engine on the recorder: its side-stream calls pass, and the wait for the side stream
// is a host synchronisation of its own.
func TestRecordSideStream(t *testing.T) {
	dev, rec := NewRecordingDevice()
	coll := newRecColl()
	n, err := NewNCCLEngine(dev, coll, 0, 1, "nccl test", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tensor.Zeros(3).ToDevice(dev)
	before := rec.Stats()
	if err := n.StartAllreduce(a.Buffer(), dist.F32); err != nil {
		t.Fatal(err)
	}
	if err := n.Wait(); err != nil {
		t.Fatal(err)
	}
	s := rec.Stats().Sub(before)
	if s.HostSyncs != 1 || len(s.HostSyncSources) != 1 || len(coll.calls) != 1 {
		t.Errorf("NCCL engine on the recorder: %+v, NCCL calls %v", s, coll.calls)
	}
	for k := range s.HostSyncSources {
		if !strings.HasPrefix(k, "SyncSide ← ") {
			t.Errorf("the side stream's wait is counted as %q", k)
		}
	}
}
