package tensor

import (
	"sync"

	"holdgo/internal/parallel"
)

// CPU kernels of the image ops: convolution as im2col + SGEMM per image,
// images split over the worker pool (cpu_norm.go and cpu_fir.go hold the
// others).

func cpuImageOp(op Op, out *Tensor, in []*Tensor) {
	switch op.Kind {
	case OpConv2d:
		var bias *Tensor
		if len(in) == 3 {
			bias = in[2]
		}
		cpuConv2d(op, out, in[0], in[1], bias)
	case OpConv2dGradInput:
		cpuConv2dGradInput(op, out, in[0], in[1])
	case OpConv2dGradWeight:
		cpuConv2dGradWeight(op, out, in[0], in[1])
	case OpGroupNorm, OpGroupNormGrad, OpGroupNormParamGrad:
		cpuGroupNorm(op, out, in)
	case OpSoftmax, OpSoftmaxGrad:
		cpuSoftmax(op, out, in)
	case OpUpFIRDn2d:
		cpuUpFIRDn2d(op, out, in[0])
	}
}

// convGeom is one convolution's sizes.
type convGeom struct {
	n, c, h, w, o, kh, kw, oh, ow, stride, pad int
}

func newConvGeom(x, w, y []int, stride, pad int) convGeom {
	return convGeom{x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], stride, pad}
}

func (g convGeom) ckk() int { return g.c * g.kh * g.kw }
func (g convGeom) ohw() int { return g.oh * g.ow }

// direct reports a 1×1, stride-1, unpadded convolution: the image itself is
// its im2col matrix.
func (g convGeom) direct() bool { return g.kh == 1 && g.kw == 1 && g.stride == 1 && g.pad == 0 }

// im2col writes col (C·KH·KW rows × OH·OW columns) of one image x (C×H×W).
func (g convGeom) im2col(col, x []float32) {
	ohw := g.ohw()
	row := 0
	for c := range g.c {
		plane := x[c*g.h*g.w : (c+1)*g.h*g.w]
		for ky := range g.kh {
			for kx := range g.kw {
				dst := col[row*ohw : (row+1)*ohw]
				row++
				for oy := range g.oh {
					d := dst[oy*g.ow : (oy+1)*g.ow]
					iy := oy*g.stride - g.pad + ky
					if iy < 0 || iy >= g.h {
						clear(d)
						continue
					}
					src := plane[iy*g.w : (iy+1)*g.w]
					if g.stride == 1 { // contiguous run with zero borders
						lo, hi := min(g.ow, max(0, g.pad-kx)), min(g.ow, g.w+g.pad-kx)
						clear(d[:lo])
						if lo < hi {
							copy(d[lo:hi], src[lo-g.pad+kx:hi-g.pad+kx])
						}
						clear(d[max(hi, lo):])
						continue
					}
					for ox := range d {
						ix := ox*g.stride - g.pad + kx
						if ix >= 0 && ix < g.w {
							d[ox] = src[ix]
						} else {
							d[ox] = 0
						}
					}
				}
			}
		}
	}
}

// col2im adds col (the layout of im2col) into the image x: its adjoint.
func (g convGeom) col2im(x, col []float32) {
	ohw := g.ohw()
	row := 0
	for c := range g.c {
		plane := x[c*g.h*g.w : (c+1)*g.h*g.w]
		for ky := range g.kh {
			for kx := range g.kw {
				src := col[row*ohw : (row+1)*ohw]
				row++
				for oy := range g.oh {
					iy := oy*g.stride - g.pad + ky
					if iy < 0 || iy >= g.h {
						continue
					}
					dst := plane[iy*g.w : (iy+1)*g.w]
					s := src[oy*g.ow : (oy+1)*g.ow]
					if g.stride == 1 {
						lo, hi := min(g.ow, max(0, g.pad-kx)), min(g.ow, g.w+g.pad-kx)
						if lo < hi {
							d := dst[lo-g.pad+kx : hi-g.pad+kx]
							for i, v := range s[lo:hi] {
								d[i] += v
							}
						}
						continue
					}
					for ox, v := range s {
						ix := ox*g.stride - g.pad + kx
						if ix >= 0 && ix < g.w {
							dst[ix] += v
						}
					}
				}
			}
		}
	}
}

// scratch recycles im2col buffers between calls.
var scratch sync.Pool

func getScratch(n int) *[]float32 {
	if p, ok := scratch.Get().(*[]float32); ok && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float32, n)
	return &s
}

func cpuConv2d(op Op, out, x, w, bias *Tensor) {
	g := newConvGeom(x.shape, w.shape, out.shape, op.Stride, op.Pad)
	ckk, ohw, chw := g.ckk(), g.ohw(), g.c*g.h*g.w
	parallel.For(g.n, 1, func(lo, hi int) {
		var col *[]float32
		if !g.direct() {
			col = getScratch(ckk * ohw)
			defer scratch.Put(col)
		}
		for b := lo; b < hi; b++ {
			src := x.data[b*chw : (b+1)*chw]
			if col != nil {
				g.im2col(*col, src)
				src = *col
			}
			dst := out.data[b*g.o*ohw : (b+1)*g.o*ohw]
			var beta float32
			if bias != nil {
				for o, v := range bias.data {
					row := dst[o*ohw : (o+1)*ohw]
					for i := range row {
						row[i] = v
					}
				}
				beta = 1
			}
			sgemm(false, false, g.o, ohw, ckk, 1, w.data, max(ckk, 1), src, max(ohw, 1), beta, dst, max(ohw, 1))
		}
	})
}

func cpuConv2dGradInput(op Op, dx, dy, w *Tensor) {
	g := newConvGeom(dx.shape, w.shape, dy.shape, op.Stride, op.Pad)
	ckk, ohw, chw := g.ckk(), g.ohw(), g.c*g.h*g.w
	parallel.For(g.n, 1, func(lo, hi int) {
		var col *[]float32
		if !g.direct() {
			col = getScratch(ckk * ohw)
			defer scratch.Put(col)
		}
		for b := lo; b < hi; b++ {
			src := dy.data[b*g.o*ohw : (b+1)*g.o*ohw]
			dst := dx.data[b*chw : (b+1)*chw]
			if col == nil {
				sgemm(true, false, ckk, ohw, g.o, 1, w.data, max(ckk, 1), src, max(ohw, 1), op.Beta, dst, max(ohw, 1))
				continue
			}
			sgemm(true, false, ckk, ohw, g.o, 1, w.data, max(ckk, 1), src, max(ohw, 1), 0, *col, max(ohw, 1))
			scaleInPlace(dst, op.Beta)
			g.col2im(dst, *col)
		}
	})
}

func scaleInPlace(d []float32, beta float32) {
	switch beta {
	case 1:
	case 0:
		clear(d)
	default:
		for i := range d {
			d[i] *= beta
		}
	}
}

func cpuConv2dGradWeight(op Op, dw, x, dy *Tensor) {
	g := newConvGeom(x.shape, dw.shape, dy.shape, op.Stride, op.Pad)
	ckk, ohw, chw := g.ckk(), g.ohw(), g.c*g.h*g.w
	size := g.o * ckk
	parts := max(1, min(g.n, parallel.Threads()))
	partial := make([][]float32, parts)
	per := (g.n + parts - 1) / max(parts, 1)
	parallel.For(parts, 1, func(lo, hi int) {
		for p := lo; p < hi; p++ {
			var col *[]float32
			if !g.direct() {
				col = getScratch(ckk * ohw)
			}
			acc := make([]float32, size)
			for b := p * per; b < min(g.n, (p+1)*per); b++ {
				src := x.data[b*chw : (b+1)*chw]
				if col != nil {
					g.im2col(*col, src)
					src = *col
				}
				sgemm(false, true, g.o, ckk, ohw, 1, dy.data[b*g.o*ohw:(b+1)*g.o*ohw], max(ohw, 1), src, max(ohw, 1), 1, acc, max(ckk, 1))
			}
			if col != nil {
				scratch.Put(col)
			}
			partial[p] = acc
		}
	})
	scaleInPlace(dw.data, op.Beta)
	for _, acc := range partial {
		for i, v := range acc {
			dw.data[i] += v
		}
	}
}
