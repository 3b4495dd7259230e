package cuda

import (
	"holdgo/tensor"
)

// Convolution on the device: im2col in bounded chunks of samples, each chunk's column matrix taken
// from the pool, consumed by one strided-batched GEMM (cuBLAS on a GPU, hg_sgemm on the shim) and
// given back right after it, so a convolution never holds a full-batch im2col buffer. With x
// (N, C, H, W), w (O, C, KH, KW), y (N, O, OH, OW), R = C·KH·KW rows and P = OH·OW columns:
//
//	forward       y[n] (O×P)  = w (O×R) · col[n] (R×P)                  (+ bias[o])
//	input grad    col[n]      = wᵀ (R×O) · dy[n] (O×P);  dx[n] = col2im(col[n]) + β·dx[n]
//	weight grad   dw (O×R)    = Σ_n dy[n]·col[n]ᵀ + β·dw
//
// The weight gradient sums over the chunk's samples inside one GEMM: the chunk is unfolded in the
// batch-in-columns layout colᵀ (R × b·P) and dy's chunk permuted to (O × b·P), so the sum over
// samples becomes the GEMM's inner dimension. A 1×1 convolution with stride 1 and no padding needs
// no im2col (x is its own column matrix).

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

// conv2d runs OpConv2d: in = x, w[, bias].
func (d *Device) conv2d(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	s := d.convShape(in[0].Shape(), in[1].Shape(), out.Shape(), op)
	err := s.chunks(func(n0, b int) error {
		return d.columns(s, ip[0], n0, b, s.rows*s.p, s.p, func(col uintptr) error {
			return d.sgemm(Gemm{M: s.o, N: s.p, K: s.rows, Alpha: 1, A: ip[1], Lda: s.rows,
				B: col, Ldb: s.p, StrideB: s.rows * s.p, C: at(o, n0*s.ySample), Ldc: s.p, StrideC: s.ySample, Batch: b})
		})
	})
	if err != nil || len(in) < 3 {
		return err
	}
	n, o2 := s.n, s.o
	if in[2].Len() > s.o { // per-sample bias (N, O): bias[(i/P) mod N·O] as N = 1, O = N·O
		n, o2 = 1, s.n*s.o
	}
	return d.hgConvBias(grid1D(out.Len()), n, o2, s.p, ip[2], o)
}

// conv2dGradInput runs OpConv2dGradInput: out = dx, in = dy, w.
func (d *Device) conv2dGradInput(op tensor.Op, out *tensor.Tensor, in []*tensor.Tensor, o uintptr, ip []uintptr) error {
	s := d.convShape(out.Shape(), in[1].Shape(), in[0].Shape(), op)
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
