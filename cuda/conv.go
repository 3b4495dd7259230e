package cuda

import (
	"fmt"
	"math"

	"holdgo/tensor"
)

// Convolutions on the device, two paths:
//
//   - implicit GEMM (the default; kernels/conv.cu): one kernel per pass gathers its operand tiles
//     straight from the NCHW tensors into shared memory, so no column matrix exists in device
//     memory; the bias is added in the forward kernel's epilogue, β·out in every pass's. The
//     weight gradient splits its long inner dimension (N·OH·OW) over gridDim.z and sums the splits
//     in order (hg_conv_splitk): deterministic, no atomics. FP32 FFMA under StrictFP32 (and on a
//     device without a vendor GEMM, i.e. the host shim, unless TF32Convs), BF16 tensor cores
//     under BF16 (operands rounded to BF16 as they are staged; the tensors stay FP32), TF32
//     tensor cores otherwise.
//   - im2col (Im2colConv, or a tensor of 2³¹ elements or more, which the implicit kernels' 32-bit
//     indexing cannot address): im2col in bounded chunks of samples, each chunk's column matrix
//     taken from the pool, consumed by one strided-batched GEMM (cuBLAS on a GPU, hg_sgemm on the
//     shim) and given back right after it, so a convolution never holds a full-batch im2col buffer.
//
// With x (N, C, H, W), w (O, C, KH, KW), y (N, O, OH, OW), R = C·KH·KW rows and P = OH·OW columns:
//
//	forward       y[n] (O×P)  = w (O×R) · col[n] (R×P)                  (+ bias[o])
//	input grad    col[n]      = wᵀ (R×O) · dy[n] (O×P);  dx[n] = col2im(col[n]) + β·dx[n]
//	weight grad   dw (O×R)    = Σ_n dy[n]·col[n]ᵀ + β·dw
//
// On the im2col path the weight gradient sums over the chunk's samples inside one GEMM: the chunk
// is unfolded in the batch-in-columns layout colᵀ (R × b·P) and dy's chunk permuted to (O × b·P),
// so the sum over samples becomes the GEMM's inner dimension. A 1×1 convolution with stride 1 and
// no padding needs no im2col (x is its own column matrix).

// DefaultConvChunkBytes bounds the column matrix of one convolution chunk (64 MiB); a single
// sample larger than that is one chunk on its own.
const DefaultConvChunkBytes = 64 << 20

type convShape struct {
	geom             Conv2D
	n, c, h, w       int
	o, oh, ow, rows  int
	p                int // OH·OW
	pointwise        bool
	chunk            int // samples per chunk
	xSample, ySample int // elements per sample of x and y
}

func (d *Device) convShape(x, w, y []int, op tensor.Op) convShape {
	s := convShape{geom: Conv2D{KH: w[2], KW: w[3], PadH: op.Pad, PadW: op.Pad, StrideH: op.Stride, StrideW: op.Stride}.norm(),
		n: x[0], c: x[1], h: x[2], w: x[3], o: w[0], oh: y[2], ow: y[3]}
	s.rows, s.p = s.c*w[2]*w[3], s.oh*s.ow
	s.pointwise = w[2] == 1 && w[3] == 1 && op.Stride == 1 && op.Pad == 0
	limit := d.ConvChunkBytes
	if limit <= 0 {
		limit = DefaultConvChunkBytes
	}
	s.chunk = max(1, min(s.n, limit/max(4*s.rows*s.p, 1)))
	s.xSample, s.ySample = s.c*s.h*s.w, s.o*s.p
	return s
}

// chunks calls f for each chunk [n0, n0+b) of samples.
func (s convShape) chunks(f func(n0, b int) error) error {
	for n0 := 0; n0 < s.n; n0 += s.chunk {
		if err := f(n0, min(s.chunk, s.n-n0)); err != nil {
			return err
		}
	}
	return nil
}

// columns runs f with the column matrix of samples [n0, n0+b) of x in the layout (sn, sr) of
// im2colLaunch, from a pool block released right after f has issued its GEMM.
func (d *Device) columns(s convShape, px uintptr, n0, b, sn, sr int, f func(col uintptr) error) error {
	xs := at(px, n0*s.xSample)
	if s.pointwise && (b == 1 || sr == s.p) {
		return f(xs)
	}
	col, err := d.scratch(4 * b * s.rows * s.p)
	if err != nil {
		return err
	}
	defer d.release(col)
	if err := d.im2colLaunch(s.geom, b, s.c, s.h, s.w, s.oh, s.ow, sn, sr, xs, col.ptr); err != nil {
		return err
	}
	return f(col.ptr)
}

// conv2d runs OpConv2d (in = x, w[, bias[, per-sample bias]]) and OpConv2dResidual (in = x, w,
// bias, r: y = (r + conv + bias)·Scalar).
func (d *Device) conv2d(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	s := d.convShape(in[0].Shape(), in[1].Shape(), out.Shape(), op)
	residual := op.Kind == tensor.OpConv2dResidual
	if d.implicitOK(s) {
		mode, bias, bias2, res := 0, uintptr(0), uintptr(0), uintptr(0)
		switch {
		case residual:
			mode, bias, res = 1, ip[2], ip[3]
		case len(in) == 4:
			mode, bias, bias2 = 3, ip[2], ip[3]
		case len(in) == 3 && in[2].Len() > s.o:
			mode, bias = 2, ip[2]
		case len(in) == 3:
			mode, bias = 1, ip[2]
		}
		return d.implicitConv(s, convFwd, 0, mode, ip[0], ip[1], bias, bias2, res, op.Scalar, o)
	}
	err := s.chunks(func(n0, b int) error {
		return d.columns(s, ip[0], n0, b, s.rows*s.p, s.p, func(col uintptr) error {
			return d.sgemm(Gemm{M: s.o, N: s.p, K: s.rows, Alpha: 1, A: ip[1], Lda: s.rows,
				B: col, Ldb: s.p, StrideB: s.rows * s.p, C: at(o, n0*s.ySample), Ldc: s.p, StrideC: s.ySample, Batch: b})
		})
	})
	if err != nil || len(in) < 3 {
		return err
	}
	nb := len(in)
	if residual {
		nb = 3
	}
	for k := 2; k < nb; k++ { // the second of two biases is added after the first here
		n, o2 := s.n, s.o
		if in[k].Len() > s.o { // per-sample bias (N, O): bias[(i/P) mod N·O] as N = 1, O = N·O
			n, o2 = 1, s.n*s.o
		}
		if err := d.hgConvBias(grid1D(out.Len()), n, o2, s.p, ip[k], o); err != nil {
			return err
		}
	}
	if residual { // y = (r + h)·s
		return d.hgAddScaled(grid1D(out.Len()), out.Len(), op.Scalar, ip[3], o, o)
	}
	return nil
}

// conv2dGradInput runs OpConv2dGradInput: out = dx, in = dy, w.
func (d *Device) conv2dGradInput(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	s := d.convShape(out.Shape(), in[1].Shape(), in[0].Shape(), op)
	if d.implicitOK(s) {
		return d.implicitConv(s, convDgrad, op.Beta, 0, ip[0], ip[1], 0, 0, 0, 0, o)
	}
	return s.chunks(func(n0, b int) error {
		g := Gemm{TransA: true, M: s.rows, N: s.p, K: s.o, Alpha: 1, A: ip[1], Lda: s.rows,
			B: at(ip[0], n0*s.ySample), Ldb: s.p, StrideB: s.ySample, Ldc: s.p, StrideC: s.rows * s.p, Batch: b}
		dx := at(o, n0*s.xSample)
		if s.pointwise { // dx[n] = wᵀ·dy[n] + β·dx[n] directly
			g.C, g.Beta = dx, op.Beta
			return d.sgemm(g)
		}
		col, err := d.scratch(4 * b * s.rows * s.p)
		if err != nil {
			return err
		}
		defer d.release(col)
		g.C = col.ptr
		if err := d.sgemm(g); err != nil {
			return err
		}
		return d.col2imLaunch(s.geom, b, s.c, s.h, s.w, s.oh, s.ow, op.Beta, col.ptr, dx)
	})
}

// conv2dGradWeight runs OpConv2dGradWeight: out = dw, in = x, dy.
func (d *Device) conv2dGradWeight(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	s := d.convShape(in[0].Shape(), out.Shape(), in[1].Shape(), op)
	if s.n == 0 || s.p == 0 { // no terms: dw = β·dw
		if op.Beta == 0 {
			return d.hgFill(grid1D(out.Len()), out.Len(), 0, o)
		}
		return d.hgUnary(grid1D(out.Len()), out.Len(), unaryCodes[tensor.OpMulScalar], op.Beta, o, o)
	}
	if d.implicitOK(s) {
		mode, db := 0, uintptr(0)
		if len(in) > 2 { // db += Σ dy, inside the kernel
			mode, db = 1, ip[2]
		}
		return d.implicitConv(s, convWgrad, op.Beta, mode, ip[0], ip[1], db, 0, 0, 0, o)
	}
	if len(in) > 2 {
		if err := d.biasGrad(s, ip[1], ip[2]); err != nil {
			return err
		}
	}
	return s.chunks(func(n0, b int) error {
		beta := float32(1)
		if n0 == 0 {
			beta = op.Beta
		}
		dy := at(ip[1], n0*s.ySample)
		if b > 1 { // dy's chunk (b, O, P) → (O, b·P)
			dyT, err := d.scratch(4 * b * s.ySample)
			if err != nil {
				return err
			}
			defer d.release(dyT)
			if err := d.stridedCopy([]int{s.o, b, s.p}, []int{s.p, s.ySample, 1}, []int{b * s.p, s.p, 1}, dy, dyT.ptr, false); err != nil {
				return err
			}
			dy = dyT.ptr
		}
		// colᵀ (R × b·P): sample i's column p at i·P + p of each row.
		return d.columns(s, ip[0], n0, b, s.p, b*s.p, func(col uintptr) error {
			return d.sgemm(Gemm{TransB: true, M: s.o, N: s.rows, K: b * s.p, Alpha: 1, Beta: beta,
				A: dy, Lda: b * s.p, B: col, Ldb: b * s.p, C: o, Ldc: s.rows, Batch: 1})
		})
	})
}

// The implicit-GEMM kernels (kernels/conv.cu) by pass, precision (FP32, TF32, BF16) and tile (64, 128).
const (
	convFwd = iota
	convDgrad
	convWgrad
)

// convKernel launches one implicit kernel; shared is its dynamic shared memory (the tensor-core
// kernels'; the FP32 ones take none).
type convKernel func(d *Device, grid [3]int, shared, n, c, h, w, o, ks, s, pd, oh, ow, kchunk int, beta float32, biasMode int,
	in, wt, bias, bias2, res uintptr, scale float32, out uintptr) error

// static adapts an FP32 kernel's launcher (no dynamic shared memory) to convKernel.
func static(f func(d *Device, grid [3]int, n, c, h, w, o, ks, s, pd, oh, ow, kchunk int, beta float32, biasMode int,
	in, wt, bias, bias2, res uintptr, scale float32, out uintptr) error) convKernel {
	return func(d *Device, grid [3]int, _, n, c, h, w, o, ks, s, pd, oh, ow, kchunk int, beta float32, biasMode int,
		in, wt, bias, bias2, res uintptr, scale float32, out uintptr) error {
		return f(d, grid, n, c, h, w, o, ks, s, pd, oh, ow, kchunk, beta, biasMode, in, wt, bias, bias2, res, scale, out)
	}
}

var convKernels = [3][3][2]convKernel{
	{{static((*Device).hgConvFwdF3264), static((*Device).hgConvFwdF32128)}, {(*Device).hgConvFwdTf3264, (*Device).hgConvFwdTf32128},
		{(*Device).hgConvFwdBf1664, (*Device).hgConvFwdBf16128}},
	{{static((*Device).hgConvDgradF3264), static((*Device).hgConvDgradF32128)}, {(*Device).hgConvDgradTf3264, (*Device).hgConvDgradTf32128},
		{(*Device).hgConvDgradBf1664, (*Device).hgConvDgradBf16128}},
	{{static((*Device).hgConvWgradF3264), static((*Device).hgConvWgradF32128)}, {(*Device).hgConvWgradTf3264, (*Device).hgConvWgradTf32128},
		{(*Device).hgConvWgradBf1664, (*Device).hgConvWgradBf16128}},
}

// convKernelName is the name of convKernels[pass][prec][tile 128?] in kernels/conv.cu.
func convKernelName(pass, prec, tile int) string {
	return fmt.Sprintf("hg_conv_%s_%s_%d", [3]string{"fwd", "dgrad", "wgrad"}[pass], [3]string{"f32", "tf32", "bf16"}[prec], tile)
}

// convShared is the dynamic shared memory of a tensor-core kernel (kernels/conv.cu: HG_CONV_STAGES
// stages of HG_CONV_BK rows of A and of B, each tile + skew floats; skew HG_CONV_SKEW_BF16 for
// BF16, HG_CONV_SKEW for TF32), 0 for an FP32 kernel.
func convShared(prec, tile int) int {
	const stages, skew, skewBF16 = 4, 8, 4
	switch prec {
	case convTF32:
		return 4 * stages * convStep * 2 * (tile + skew)
	case convBF16:
		return 4 * stages * convStep * 2 * (tile + skewBF16)
	}
	return 0
}

// The products' precision of the implicit kernels (the second index of convKernels).
const (
	convF32 = iota
	convTF32
	convBF16
)

// convBlocks is the number of blocks the tile and split choice aims for: two waves of 132 SMs
// (an H100 SXM; an H200 has as many), so that the larger tile is used only where it still fills
// the GPU. The choice depends on the shape only, never on the GPU present: a run gives the same
// bits on every GPU of one model and build.
const convBlocks = 264

// convStep is the inner-dimension step of the kernels (HG_CONV_BK): a split's length is a multiple.
const convStep = 16

// implicitOK reports whether the implicit kernels can run s: every tensor and GEMM extent under
// 2³¹ elements (their indexing is 32-bit).
func (d *Device) implicitOK(s convShape) bool {
	if d.Im2colConv {
		return false
	}
	for _, v := range []int{s.n * s.c * s.h * s.w, s.n * s.o * s.p, s.o * s.rows, s.n * s.p * max(1, s.geom.KH*s.geom.KW), s.n * s.h * s.w} {
		if v >= math.MaxInt32 {
			return false
		}
	}
	return true
}

// convPrecision is the implicit kernels' precision: FP32 under StrictFP32, BF16 under BF16 (on
// the host shim too, emulated), TF32 on a device with a vendor GEMM or with TF32Convs, FP32
// otherwise.
func (d *Device) convPrecision() int {
	switch {
	case d.StrictFP32:
		return convF32
	case d.BF16:
		return convBF16
	case d.gemm != nil || d.TF32Convs:
		return convTF32
	}
	return convF32
}

// convPlan is one implicit-GEMM launch: its GEMM extents, tile and splits.
type convPlan struct {
	pass          int
	m, nc, k      int
	tile, splits  int
	shared        int // the kernel's dynamic shared memory
	kchunk        int
	kernel        convKernel
	grid          [3]int
	workspaceElts int // the weight gradient's split partials (splits > 1)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func (d *Device) convPlan(s convShape, pass int) convPlan {
	kk := s.geom.KH * s.geom.KW
	p := convPlan{pass: pass}
	switch pass {
	case convFwd:
		p.m, p.nc, p.k = s.o, s.n*s.p, s.rows
	case convDgrad:
		p.m, p.nc, p.k = s.c, s.n*s.h*s.w, s.o*kk
	default:
		p.m, p.nc, p.k = s.o, s.rows, s.n*s.p
	}
	tiles := func(t int) int { return ceilDiv(p.m, t) * ceilDiv(p.nc, t) }
	prec := d.convPrecision()
	g := ConvGeom{N: s.n, C: s.c, H: s.h, W: s.w, O: s.o, K: s.geom.KH, S: s.geom.StrideH, P: s.geom.PadH}
	p.tile = 64
	if t, ok := d.Tiles[ConvTileKey(g, pass, precName(prec))]; ok && prec != convF32 && d.ConvTile == 0 {
		p.tile = t // measured on this GPU and build (tiles.go)
	} else if d.ConvTile == 64 || d.ConvTile == 128 {
		p.tile = d.ConvTile
	} else if p.m >= 128 && p.nc >= 128 && (pass == convWgrad || tiles(128) >= convBlocks) {
		p.tile = 128
	}
	// A tensor-core 128 tile needs 68 KiB of shared memory, which the kernel must opt in to; where
	// the backend refuses (Device.OptInErr), the 64 tile runs.
	if p.tile == 128 && !d.optInShared(convKernelName(pass, prec, 128), convShared(prec, 128)) {
		p.tile = 64
	}
	p.shared = convShared(prec, p.tile)
	p.splits = 1
	if pass == convWgrad {
		p.splits = d.ConvSplits
		if p.splits <= 0 { // fill convBlocks, each split at least 256 long, at most 64 splits
			p.splits = min(ceilDiv(convBlocks, tiles(p.tile)), max(1, p.k/256), 64)
		}
		p.splits = max(1, min(p.splits, ceilDiv(p.k, convStep)))
	}
	p.kchunk = max(convStep, ceilDiv(ceilDiv(p.k, p.splits), convStep)*convStep) // K = 0: one split, no steps
	p.splits = max(1, ceilDiv(p.k, p.kchunk))
	if p.splits > 1 {
		p.workspaceElts = p.splits * (p.m*p.nc + p.m) // the partial D, then the bias sums' (wgrad with a bias)
		if p.workspaceElts >= math.MaxInt32 {
			p.splits, p.kchunk, p.workspaceElts = 1, max(convStep, p.k), 0
		}
	}
	big := 0
	if p.tile == 128 {
		big = 1
	}
	p.kernel = convKernels[pass][prec][big]
	p.grid = [3]int{ceilDiv(p.nc, p.tile), ceilDiv(p.m, p.tile), p.splits}
	return p
}

// implicitConv runs pass on the implicit kernels: in and wt are the pass's two operands (fwd: x, w;
// dgrad: dy, w; wgrad: x, dy), out its result, D = acc (+ bias) + beta·D.
func (d *Device) implicitConv(s convShape, pass int, beta float32, biasMode int, in, wt, bias, bias2, res uintptr,
	scale float32, out uintptr) error {
	p := d.convPlan(s, pass)
	if p.m == 0 || p.nc == 0 {
		return nil
	}
	g := s.geom
	launch := func(dst uintptr) error {
		return p.kernel(d, p.grid, p.shared, s.n, s.c, s.h, s.w, s.o, g.KH, g.StrideH, g.PadH, s.oh, s.ow, p.kchunk, beta, biasMode,
			in, wt, bias, bias2, res, scale, dst)
	}
	if p.splits == 1 {
		return launch(out)
	}
	ws, err := d.scratch(4 * p.workspaceElts)
	if err != nil {
		return err
	}
	defer d.release(ws)
	if err := launch(ws.ptr); err != nil {
		return err
	}
	n, nb := p.m*p.nc, 0
	if pass == convWgrad && biasMode == 1 {
		nb = p.m
	}
	return d.hgConvSplitk(grid1D(n+nb), n, p.splits, beta, ws.ptr, out, nb, bias)
}

// biasGrad adds Σ_{n,p} dy into db (O) for the im2col path: the sum over (N, P) into scratch, then
// added.
func (d *Device) biasGrad(s convShape, dy, db uintptr) error {
	sum, err := d.scratch(4 * s.o)
	if err != nil {
		return err
	}
	defer d.release(sum)
	if err := d.reduce(reduceSum, []int{0, 2}, []int{s.n, s.o, s.p}, sum.ptr, dy); err != nil {
		return err
	}
	return d.hgBinary(grid1D(s.o), s.o, binaryCodes[tensor.OpAdd], db, sum.ptr, db)
}
