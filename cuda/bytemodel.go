package cuda

import (
	"math"
	"strings"
)

// The byte models of the recording device (record.go): for every kernel of kernels/*.cu, the
// bytes one launch reads and writes in device memory, computed from its grid and argument slots.
//
// One rule for all: each pass a kernel makes over a tensor counts that tensor's elements once —
// a tensor read again in a second loop counts again (group norm reads x in its Welford pass and
// again to normalise), while the repeated reads of one element inside a pass do not (im2col
// reads each input pixel for up to KH·KW columns; a broadcast operand is read once, its
// footprint). Small per-channel or per-sample operands (γ, β, a bias, coefficients, the step
// statistics, index lists) count once per launch. Float tensors are 4 bytes an element, float64
// partial sums, coefficients and statistics 8. What a kernel's code does on a path that depends on
// the data (hg_clip_adam and hg_ema_guard skip a non-finite step) is modelled on the normal path.
// The result is the DRAM traffic of each pass streaming its tensors once: a lower bound of a
// kernel's memory requests, an upper bound of its DRAM traffic when a pass's re-reads hit the cache
// but consecutive passes do not.
//
// Every kernel with a launcher (launch_gen.go) must have a model here (TestByteModelsCoverKernels);
// a launch of a kernel without one is reported by the recorder (RecordStats.Unmodelled), never
// counted as 0 bytes.

// kernelArgs reads a launch's argument slots (args in launch.go).
type kernelArgs []uint64

func (a kernelArgs) i(k int) int64   { return int64(int32(uint32(a[k]))) } // C int
func (a kernelArgs) ll(k int) int64  { return int64(a[k]) }                // C long long
func (a kernelArgs) f(k int) float32 { return math.Float32frombits(uint32(a[k])) }
func (a kernelArgs) p(k int) uint64  { return a[k] }

// ints returns the maxRank C ints from slot k on (the d0…d5 of the strided kernels).
func (a kernelArgs) ints(k int) [maxRank]int64 {
	var r [maxRank]int64
	for j := range r {
		r[j] = a.i(k + j)
	}
	return r
}

// byteModel is one kernel's model: its family (the breakdown of holdctl bench train --device
// record), how many argument slots it takes, and bytes read and written per launch.
type byteModel struct {
	family string
	slots  int
	bytes  func(grid [3]int, a kernelArgs) (read, write int64)
}

// flopModels are the FLOPs (2 × multiply-adds) of one launch of the GEMM-like kernels, the
// implicit convolutions, which the recorder adds to GemmFLOPs as it does a vendor GEMM's.
var flopModels = map[string]func(grid [3]int, a kernelArgs) int64{}

func init() {
	for name := range byteModels {
		switch {
		case strings.HasPrefix(name, "hg_conv_fwd_"):
			flopModels[name] = convFwdFLOPs
		case strings.HasPrefix(name, "hg_conv_dgrad_"):
			flopModels[name] = convDgradFLOPs
		case strings.HasPrefix(name, "hg_conv_wgrad_"):
			flopModels[name] = convWgradFLOPs
		}
	}
}

// footprint is the elements an operand with strides s covers over dims d: the product of the
// dimensions it does not broadcast (stride ≠ 0).
func footprint(d, s [maxRank]int64) int64 {
	n := int64(1)
	for k := range d {
		if s[k] != 0 {
			n *= d[k]
		}
	}
	return n
}

// hitRows is how many of the n input rows (or columns) a window scan touches: output index o in
// [0, out) and tap k in [0, taps) read input u = o·stride − pad + k·dil, scaled back by up (u must
// be a multiple of up; u/up < n). im2col and col2im use up = 1.
func hitRows(n, out, taps, stride, pad, dil, up int64) int64 {
	hit := make([]bool, n)
	count := int64(0)
	for o := range out {
		for k := range taps {
			u := o*stride - pad + k*dil
			if u < 0 || u%up != 0 || u/up >= n || hit[u/up] {
				continue
			}
			hit[u/up] = true
			count++
		}
	}
	return count
}

// validPairs is how many (output index, tap) pairs of a window scan read inside the input: the
// entries of a column matrix that are not padding.
func validPairs(n, out, taps, stride, pad, dil int64) int64 {
	count := int64(0)
	for o := range out {
		for k := range taps {
			if u := o*stride - pad + k*dil; u >= 0 && u < n {
				count++
			}
		}
	}
	return count
}

// gn is the (N, C, S, G) of a group-norm kernel (its first four slots): T = N·C·S elements of x,
// C channels, N·G groups.
func gn(a kernelArgs) (t, c, groups int64) {
	return a.i(0) * a.i(1) * a.i(2), a.i(1), a.i(0) * a.i(3)
}

// gnPasses is the elements passes passes over x read (T elements each): one when the group is
// cached in shared memory (cache ≠ 0), the first pass storing it.
func gnPasses(passes, cache, t int64) int64 {
	if cache != 0 {
		return t
	}
	return passes * t
}

// gnBackwardBytes is a group-norm backward kernel's (hg_group_norm_backward,
// hg_group_norm_silu_dropout_backward): x three times and dy twice; cache 1: x once, dy twice;
// cache 2: each once. γ (and β for SiLU), dx when keep ≠ 0; write dx and the partials (2, N, C).
func gnBackwardBytes(a kernelArgs, silu int64, keep float32, cache int64) (int64, int64) {
	t, c, _ := gn(a)
	read := 3*t + 2*t
	switch cache {
	case 1:
		read = t + 2*t
	case 2:
		read = 2 * t
	}
	read += c * (1 + silu)
	if keep != 0 {
		read += t
	}
	return 4 * read, 4 * (t + 2*a.i(0)*c)
}

// byteModels is the table, by kernel name; the comment on each row is the count it implements.
var byteModels = map[string]byteModel{
	// element-wise: y = f(x), y = g(a, b), fill.
	"hg_fill": {"element-wise", 3, func(_ [3]int, a kernelArgs) (int64, int64) { // write y
		return 0, 4 * a.i(0)
	}},
	"hg_unary": {"element-wise", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // read x, write y
		return 4 * a.i(0), 4 * a.i(0)
	}},
	"hg_binary": {"element-wise", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // read a and b (once if the same), write y
		n := a.i(0)
		if a.p(2) == a.p(3) {
			return 4 * n, 4 * n
		}
		return 8 * n, 4 * n
	}},
	"hg_binary_bcast": {"element-wise", 35, func(_ [3]int, a kernelArgs) (int64, int64) { // a's and b's footprints, write y
		d := a.ints(2)
		return 4 * (footprint(d, a.ints(8)) + footprint(d, a.ints(14))), 4 * a.i(0)
	}},
	// layout: strided copies and row gathers.
	"hg_strided_copy": {"copy", 34, func(_ [3]int, a kernelArgs) (int64, int64) { // src's footprint (+ dst when accumulating), write dst
		n, d := a.i(0), a.ints(2)
		r := 4 * footprint(d, a.ints(8))
		if a.i(1) != 0 {
			r += 4 * n
		}
		return r, 4 * n
	}},
	"hg_gather_rows": {"copy", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // idx, rows·cols of x (distinct indices), write y
		rows, cols := a.i(0), a.i(1)
		return 4*rows + 4*rows*cols, 4 * rows * cols
	}},
	"hg_scatter_rows": {"copy", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // idx, x, y's rows (distinct indices); write them
		rows, cols := a.i(0), a.i(1)
		return 4*rows + 8*rows*cols, 4 * rows * cols
	}},
	// convolution glue: im2col, col2im, the channel bias.
	"hg_im2col": {"im2col", 18, func(_ [3]int, a kernelArgs) (int64, int64) { // x's pixels the windows touch, write every column entry
		n, c, h, w := a.i(0), a.i(1), a.i(2), a.i(3)
		kh, kw, ph, pw, sh, sw, dh, dw, oh, ow := a.i(4), a.i(5), a.i(6), a.i(7), a.i(8), a.i(9), a.i(10), a.i(11), a.i(12), a.i(13)
		read := n * c * hitRows(h, oh, kh, sh, ph, dh, 1) * hitRows(w, ow, kw, sw, pw, dw, 1)
		return 4 * read, 4 * n * c * kh * kw * oh * ow
	}},
	"hg_col2im": {"col2im", 17, func(_ [3]int, a kernelArgs) (int64, int64) { // the column entries inside the image (+ x if β ≠ 0), write x
		n, c, h, w := a.i(0), a.i(1), a.i(2), a.i(3)
		kh, kw, ph, pw, sh, sw, dh, dw, oh, ow := a.i(4), a.i(5), a.i(6), a.i(7), a.i(8), a.i(9), a.i(10), a.i(11), a.i(12), a.i(13)
		x := n * c * h * w
		read := n * c * validPairs(h, oh, kh, sh, ph, dh) * validPairs(w, ow, kw, sw, pw, dw)
		if a.f(14) != 0 {
			read += x
		}
		return 4 * read, 4 * x
	}},
	// the implicit-GEMM convolutions (conv.cu): each operand and the result once (the tiles'
	// re-reads of an operand across blocks hit the cache), the bias once; the weight gradient's
	// splits write their partials, which hg_conv_splitk reads back.
	"hg_conv_splitk": {"conv", 7, func(_ [3]int, a kernelArgs) (int64, int64) { // the splits' partials (+ out if β ≠ 0) and bias sums (+ db); write out, db
		n, splits, nb := a.i(0), a.i(1), a.i(5)
		read := splits*n + splits*nb + nb
		if a.f(2) != 0 {
			read += n
		}
		return 4 * read, 4 * (n + nb)
	}},
	"hg_conv_fwd_f32_64":     {"conv", 20, convFwdBytes},
	"hg_conv_fwd_f32_128":    {"conv", 20, convFwdBytes},
	"hg_conv_fwd_tf32_64":    {"conv", 20, convFwdBytes},
	"hg_conv_fwd_tf32_128":   {"conv", 20, convFwdBytes},
	"hg_conv_fwd_bf16_64":    {"conv", 20, convFwdBytes},
	"hg_conv_fwd_bf16_128":   {"conv", 20, convFwdBytes},
	"hg_conv_dgrad_f32_64":   {"conv", 20, convDgradBytes},
	"hg_conv_dgrad_f32_128":  {"conv", 20, convDgradBytes},
	"hg_conv_dgrad_tf32_64":  {"conv", 20, convDgradBytes},
	"hg_conv_dgrad_tf32_128": {"conv", 20, convDgradBytes},
	"hg_conv_dgrad_bf16_64":  {"conv", 20, convDgradBytes},
	"hg_conv_dgrad_bf16_128": {"conv", 20, convDgradBytes},
	"hg_conv_wgrad_f32_64":   {"conv", 20, convWgradBytes},
	"hg_conv_wgrad_f32_128":  {"conv", 20, convWgradBytes},
	"hg_conv_wgrad_tf32_64":  {"conv", 20, convWgradBytes},
	"hg_conv_wgrad_tf32_128": {"conv", 20, convWgradBytes},
	"hg_conv_wgrad_bf16_64":  {"conv", 20, convWgradBytes},
	"hg_conv_wgrad_bf16_128": {"conv", 20, convWgradBytes},
	"hg_add_scaled": {"element-wise", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // a, b read, y written
		n := a.i(0)
		return 8 * n, 4 * n
	}},
	// the warp layer's test kernel (one block): 256 lanes' A, B and C fragments read, D written.
	"hg_warp_mma_tf32": {"test", 3, func(_ [3]int, _ kernelArgs) (int64, int64) { return 4 * (1024 + 512 + 1024), 4 * 1024 }},
	"hg_warp_mma_bf16": {"test", 3, func(_ [3]int, _ kernelArgs) (int64, int64) { return 4 * (2048 + 1024 + 1024), 4 * 1024 }},
	"hg_conv_bias": {"conv-bias", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // y and the bias, write y
		y := a.i(0) * a.i(1) * a.i(2)
		return 4 * (y + a.i(1)), 4 * y
	}},
	// group norm: passes over x (N, C, S) as the kernels' loops make them; a pass over a group
	// cached in shared memory (the cache argument) reads nothing.
	"hg_group_norm": {"group-norm", 12, func(_ [3]int, a kernelArgs) (int64, int64) { // x twice (once cached), γ, β; write y, mean, rstd
		t, c, g := gn(a)
		return 4 * (gnPasses(2, a.i(5), t) + 2*c), 4 * (t + 2*g)
	}},
	"hg_group_norm_silu": {"group-norm", 10, func(_ [3]int, a kernelArgs) (int64, int64) { // x twice (once cached), γ, β; write y
		t, c, _ := gn(a)
		return 4 * (gnPasses(2, a.i(5), t) + 2*c), 4 * t
	}},
	"hg_group_norm_backward": {"group-norm", 14, func(_ [3]int, a kernelArgs) (int64, int64) {
		return gnBackwardBytes(a, a.i(5), a.f(6), a.i(7)) // silu, keep, cache
	}},
	// the fused group norm + SiLU + dropout: as hg_group_norm_silu and the SiLU backward (the
	// mask is drawn from its counters, nothing read for it).
	"hg_group_norm_silu_dropout": {"group-norm", 16, func(_ [3]int, a kernelArgs) (int64, int64) { // x twice (once cached), γ, β; write y
		t, c, _ := gn(a)
		return 4 * (gnPasses(2, a.i(5), t) + 2*c), 4 * t
	}},
	"hg_group_norm_silu_dropout_backward": {"group-norm", 19, func(_ [3]int, a kernelArgs) (int64, int64) {
		return gnBackwardBytes(a, 1, a.f(5), a.i(6)) // keep, cache
	}},
	"hg_group_norm_param_sum": {"group-norm", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // partials (2, N, C), dγ, dβ; write dγ, dβ
		n, c := a.i(0), a.i(1)
		return 4 * (2*n*c + 2*c), 4 * 2 * c
	}},
	// softmax over rows × cols: three passes forward, two backward.
	"hg_softmax_fwd": {"softmax", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // x three times; write y
		n := a.i(0) * a.i(1)
		return 4 * 3 * n, 4 * n
	}},
	"hg_softmax_bwd": {"softmax", 6, func(_ [3]int, a kernelArgs) (int64, int64) { // y and dy twice; write dx
		n := a.i(0) * a.i(1)
		return 4 * 4 * n, 4 * n
	}},
	// reductions over one axis.
	"hg_reduce_rows": {"reduce", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // x (rows·r); write rows
		return 4 * a.i(0) * a.i(1), 4 * a.i(0)
	}},
	"hg_reduce_cols": {"reduce", 6, func(_ [3]int, a kernelArgs) (int64, int64) { // x (outer·r·inner); write outer·inner
		return 4 * a.i(0) * a.i(1) * a.i(2), 4 * a.i(0) * a.i(2)
	}},
	// FIR resampling: the input pixels the 4×4 windows touch, write y (NC, OH, OW).
	"hg_upfirdn2d_sep": {"fir", 15, func(_ [3]int, a kernelArgs) (int64, int64) {
		nc, h, w, up, down, pad, oh, ow := a.i(0), a.i(1), a.i(2), a.i(3), a.i(4), a.i(5), a.i(6), a.i(7)
		read := nc * hitRows(h, oh, 4, down, pad, 1, up) * hitRows(w, ow, 4, down, pad, 1, up)
		return 4 * read, 4 * nc * oh * ow
	}},
	// random numbers and dropout (Philox counters: nothing read but the input).
	"hg_philox_normal":  {"random", 6, func(_ [3]int, a kernelArgs) (int64, int64) { return 0, 4 * a.ll(0) }},
	"hg_philox_uniform": {"random", 5, func(_ [3]int, a kernelArgs) (int64, int64) { return 0, 4 * a.ll(0) }},
	"hg_dropout": {"dropout", 9, func(_ [3]int, a kernelArgs) (int64, int64) { // read x, write y
		return 4 * a.ll(0), 4 * a.ll(0)
	}},
	// the training step: loss, norm, clipped Adam, EMA (stats: the loss and norm, 16 bytes).
	"hg_score_loss": {"train", 6, func(g [3]int, a kernelArgs) (int64, int64) { // out, target; write grad, one partial per block
		n := a.i(0)
		return 8 * n, 4*n + 8*int64(g[0])
	}},
	"hg_sumsq": {"train", 3, func(g [3]int, a kernelArgs) (int64, int64) { // x; one partial per block
		return 4 * a.i(0), 8 * int64(g[0])
	}},
	"hg_finish": {"train", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // the partials; one statistic
		return 8 * a.i(0), 8
	}},
	"hg_clip_adam": {"train", 12, func(_ [3]int, a kernelArgs) (int64, int64) { // stats, p, g, m, v; write p, m, v
		n := a.i(0)
		return 16 + 16*n, 12 * n
	}},
	"hg_ema_guard": {"train", 5, func(_ [3]int, a kernelArgs) (int64, int64) { // stats, shadow, p; write shadow
		n := a.i(0)
		return 16 + 8*n, 4 * n
	}},
	// HOLD: the reparameterisation, the time embedding, the sampler steps (B samples, n blocks of d).
	"hg_hold_perturb": {"perturb", 9, func(_ [3]int, a kernelArgs) (int64, int64) { // coef (32 doubles a sample), q0, ε (and aux); write x, target
		b, n, d := a.i(0), a.i(1), a.i(2)
		read := 8*32*b + 4*(b*d+b*n*d)
		if a.p(6) != 0 {
			read += 4 * b * (n - 1) * d
		}
		return read, 4 * (b*n*d + b*d)
	}},
	"hg_time_embed": {"time-embed", 7, func(_ [3]int, a kernelArgs) (int64, int64) { // t (and w for Fourier); write (B, 2·half)
		b, half := a.i(0), a.i(1)
		read := 4 * b
		if a.i(2) == 0 {
			read += 4 * half
		}
		return read, 4 * 2 * b * half
	}},
	"hg_lt_step": {"sampler", 9, func(_ [3]int, a kernelArgs) (int64, int64) { // coef (66 doubles), x, score, z1 (and z2); write x
		b, n, d, halves := a.i(0), a.i(1), a.i(2), a.i(3)
		return 8*66 + 4*(b*n*d*(1+halves)+b*d), 4 * b * n * d
	}},
	"hg_lt_b": {"sampler", 6, func(_ [3]int, a kernelArgs) (int64, int64) { // bs, be, x's last block, score; write it
		b, d := a.i(0), a.i(2)
		return 8*2 + 8*b*d, 4 * b * d
	}},
	"hg_lt_a": {"sampler", 7, func(_ [3]int, a kernelArgs) (int64, int64) { // E, K (32 doubles), x, z; write x
		b, n, d := a.i(0), a.i(1), a.i(2)
		return 8*32 + 8*b*n*d, 4 * b * n * d
	}},
	// the portable GEMM (a device without a vendor GEMM): each operand once per batch entry
	// (once if its stride is 0), C read when β ≠ 0; batch = gridDim.z.
	"hg_sgemm": {"sgemm", 16, func(g [3]int, a kernelArgs) (int64, int64) {
		m, n, k, batch := a.i(0), a.i(1), a.i(2), int64(g[2])
		per := func(elems, stride int64) int64 {
			if stride == 0 {
				return elems
			}
			return elems * batch
		}
		read := per(m*k, a.ll(8)) + per(k*n, a.ll(11))
		if a.f(12) != 0 {
			read += m * n * batch
		}
		return 4 * read, 4 * m * n * batch
	}},
}

// convGeom reads the implicit convolutions' shared arguments: N, C, H·W, O, KS², OH·OW.
func convGeom(a kernelArgs) (n, c, hw, o, kk, p int64) {
	return a.i(0), a.i(1), a.i(2) * a.i(3), a.i(4), a.i(5) * a.i(5), a.i(8) * a.i(9)
}

// convFwdBytes: x, w, the bias (biasMode 1: O values, 2: N·O, 3: both) and the residual (if any) read, y written (and read if β ≠ 0).
func convFwdBytes(_ [3]int, a kernelArgs) (int64, int64) {
	n, c, hw, o, kk, p := convGeom(a)
	read := n*c*hw + o*c*kk
	switch a.i(12) {
	case 1:
		read += o
	case 2:
		read += n * o
	case 3:
		read += o + n*o
	}
	if a.p(17) != 0 { // the residual r (N, O, P)
		read += n * o * p
	}
	if a.f(11) != 0 {
		read += n * o * p
	}
	return 4 * read, 4 * n * o * p
}

// convDgradBytes: dy and w read, dx written (and read if β ≠ 0).
func convDgradBytes(_ [3]int, a kernelArgs) (int64, int64) {
	n, c, hw, o, kk, p := convGeom(a)
	read := n*o*p + o*c*kk
	if a.f(11) != 0 {
		read += n * c * hw
	}
	return 4 * read, 4 * n * c * hw
}

// convWgradBytes: x and dy read; dw written (and read if β ≠ 0), or with gridDim.z = splits > 1
// each split's partial dw. With the bias gradient (biasMode 1): db read and written (O), or each
// split's O sums written.
func convWgradBytes(grid [3]int, a kernelArgs) (int64, int64) {
	n, c, hw, o, kk, p := convGeom(a)
	read, dw, db := n*c*hw+n*o*p, o*c*kk, int64(0)
	if a.i(12) == 1 {
		db = o
	}
	if grid[2] > 1 {
		return 4 * read, 4 * int64(grid[2]) * (dw + db)
	}
	if a.f(11) != 0 {
		read += dw
	}
	return 4 * (read + db), 4 * (dw + db)
}

// The FLOPs the implicit convolutions execute, 2·M·NC·K of their GEMM: the input gradient's K
// (O·KS²) includes the taps a stride above 1 skips (its B operand is 0 there).
func convFwdFLOPs(_ [3]int, a kernelArgs) int64 {
	n, c, _, o, kk, p := convGeom(a)
	return 2 * o * n * p * c * kk
}

func convDgradFLOPs(_ [3]int, a kernelArgs) int64 {
	n, c, hw, o, kk, _ := convGeom(a)
	return 2 * c * n * hw * o * kk
}

func convWgradFLOPs(_ [3]int, a kernelArgs) int64 {
	n, c, _, o, kk, p := convGeom(a)
	return 2 * o * c * kk * n * p
}
