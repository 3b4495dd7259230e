package tensor

import (
	"holdgo/internal/hugepage"
	"math/bits"
	"sync"

	"holdgo/internal/gemm"
	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// CPU kernels of the image ops (cpu_norm.go and cpu_fir.go hold group norm,
// softmax and FIR). Convolution is im2col + SGEMM: the im2col matrices of a
// few images are joined side by side into one GEMM about colTarget columns
// wide, and these chunks run in parallel. The input gradient is SGEMM then
// col2im, the weight gradient im2col then SGEMM into a partial sum per task.

func cpuImageOp(op Op, out *Tensor, in []*Tensor) {
	switch op.Kind {
	case OpConv2d:
		var bias *Tensor
		switch len(in) {
		case 3:
			bias = in[2]
		case 4: // (O) + (N, O) → one per-sample bias, added in float32 as Add did
			b, sb := in[2].data, in[3].data
			bias = &Tensor{shape: in[3].shape, data: make([]float32, len(sb))}
			for i, v := range sb {
				bias.data[i] = v + b[i%len(b)]
			}
		}
		cpuConv2d(op, out, in[0], in[1], bias)
	case OpConv2dResidual: // the convolution, then AddScaled's vec.Add and vec.Scale: its bits
		cpuConv2d(op, out, in[0], in[1], in[2])
		o, r, s := out.data, in[3].data, op.Scalar
		parallel.For(len(o), grain, func(lo, hi int) {
			vec.Add(o[lo:hi], r[lo:hi], o[lo:hi])
			vec.Scale(o[lo:hi], o[lo:hi], s)
		})
	case OpConv2dGradInput:
		cpuConv2dGradInput(op, out, in[0], in[1])
	case OpConv2dGradWeight:
		cpuConv2dGradWeight(op, out, in[0], in[1])
		if len(in) == 3 {
			cpuBiasGrad(in[2], in[1])
		}
	case OpGroupNorm, OpGroupNormSiLU, OpGroupNormBackward, OpGroupNormSiLUBackward:
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

// pointwise reports a direct convolution that runs as one GEMM per image on
// the tensors in place (forward Y_j = W X_j, input gradient dX_j = Wᵀ dY_j,
// weight gradient dW = Σ_j dY_j X_jᵀ), without im2col's copies, the scatter
// into NCHW and col2im: those cost as much as the GEMMs themselves (1×1
// convolutions ran at 18–36 GFLOP/s on NCSN++'s shapes). It needs images of
// at least pointwiseMinPixels pixels, for GEMMs of several full panels.
func (g convGeom) pointwise() bool { return g.direct() && g.h*g.w >= pointwiseMinPixels }

const (
	pointwiseMinPixels = 49
	// pointwiseTasks is the number of partial weight gradients of a
	// pointwise convolution (parallel work; fixed, for results that do
	// not depend on the thread count).
	pointwiseTasks = 8
)

// im2col writes the im2col matrix of one image x (C×H×W) — C·KH·KW rows of
// OH·OW columns — into col, whose rows are ld apart.
func (g convGeom) im2col(col []float32, ld int, x []float32) {
	ohw := g.ohw()
	row := 0
	for c := range g.c {
		plane := x[c*g.h*g.w : (c+1)*g.h*g.w]
		for ky := range g.kh {
			for kx := range g.kw {
				g.im2colRow(col[row*ld:row*ld+ohw], plane, ky, kx)
				row++
			}
		}
	}
}

// im2colRow writes row (c, ky, kx) of one image's im2col matrix, the OH·OW
// values plane (channel c, H×W) contributes at kernel offset (ky, kx), into d.
func (g convGeom) im2colRow(dst, plane []float32, ky, kx int) {
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

// im2colPanels writes the im2col matrix of images b0…b0+nb−1 of x (C·KH·KW
// rows of nb·OH·OW columns) straight into gemm.SgemmPackedB's layout:
// panels of nr columns, each holding all C·KH·KW rows (row by row, a
// partial last panel zero-padded). A row is built in tmp (nb·OH·OW floats,
// in L1/L2) and dealt out to the panels, so the matrix is written once
// instead of written by im2col and copied again by the GEMM's packing.
func (g convGeom) im2colPanels(dst, tmp, x []float32, b0, nb, nr int) {
	chw, ohw, k := g.c*g.h*g.w, g.ohw(), g.ckk()
	cols := nb * ohw
	tmp = tmp[:cols]
	row := 0
	for c := range g.c {
		for ky := range g.kh {
			for kx := range g.kw {
				for j := range nb {
					plane := x[(b0+j)*chw+c*g.h*g.w : (b0+j)*chw+(c+1)*g.h*g.w]
					g.im2colRow(tmp[j*ohw:(j+1)*ohw], plane, ky, kx)
				}
				for p := 0; p*nr < cols; p++ {
					seg := dst[(p*k+row)*nr : (p*k+row+1)*nr]
					n := copy(seg, tmp[p*nr:min((p+1)*nr, cols)])
					clear(seg[n:])
				}
				row++
			}
		}
	}
}

// col2im adds col (the layout of im2col, rows ld apart) into the image x:
// the adjoint of im2col.
func (g convGeom) col2im(x, col []float32, ld int) {
	ohw := g.ohw()
	row := 0
	for c := range g.c {
		plane := x[c*g.h*g.w : (c+1)*g.h*g.w]
		for ky := range g.kh {
			for kx := range g.kw {
				src := col[row*ld : row*ld+ohw]
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

// scratch recycles the kernels' work buffers (im2col matrices, Winograd
// transforms, partial sums) between calls, in classes of capacity 2^k
// floats. It keeps them across garbage collections, up to scratchBytes of
// free buffers (a buffer returned beyond that is left to the collector).
//
// It was a sync.Pool, which empties at garbage collections: with the
// Winograd weight gradient's buffers (tens of MiB a call) in the mix, every
// few steps the kernels allocated fresh buffers, and the page faults of the
// new memory cost 6 s of system time in 35 s (ncsnpp-cifar10 training step,
// one thread) and slowed the forward pass by a third.
var scratch struct {
	mu    sync.Mutex
	free  [bits.UintSize][]*[]float32
	bytes int
}

// scratchBytes bounds the free buffers scratch keeps.
const scratchBytes = 256 << 20

// getScratch returns a buffer of n floats (contents undefined); give it
// back with putScratch.
func getScratch(n int) *[]float32 {
	k := bits.Len(uint(max(n, 1) - 1))
	scratch.mu.Lock()
	if list := scratch.free[k]; len(list) > 0 {
		p := list[len(list)-1]
		scratch.free[k] = list[:len(list)-1]
		scratch.bytes -= 4 * cap(*p)
		scratch.mu.Unlock()
		*p = (*p)[:n]
		return p
	}
	scratch.mu.Unlock()
	s := make([]float32, n, 1<<k)
	hugepage.Advise(s[:cap(s)])
	return &s
}

// putScratch returns a buffer of getScratch.
func putScratch(p *[]float32) {
	k, size := bits.Len(uint(cap(*p)))-1, 4*cap(*p)
	scratch.mu.Lock()
	if scratch.bytes+size <= scratchBytes {
		scratch.free[k] = append(scratch.free[k], p)
		scratch.bytes += size
	}
	scratch.mu.Unlock()
}

// colTarget is the width (columns) the im2col matrices of a chunk of images
// aim for: images are joined side by side until a GEMM is about this wide,
// so that small late-level images (7×7) still make efficient GEMMs and the
// weight is packed once per chunk; chunks run in parallel.
const colTarget = 1024

// chunk is the number of images per chunk.
func (g convGeom) chunk() int { return max(1, min(g.n, (colTarget+g.ohw()-1)/max(g.ohw(), 1))) }

// forChunks calls f for every chunk [b0, b0+nb) of images, chunks split over
// the worker pool; task numbers the calls' worker-local scratch: col
// (C·KH·KW × nb·OH·OW, with capacity for the columns rounded up to 32) and
// mat (O × nb·OH·OW). It returns the number of tasks.
func (g convGeom) forChunks(f func(task, b0, nb int, col, mat []float32)) int {
	per := g.chunk()
	chunks := (g.n + per - 1) / per
	cols := per * g.ohw()
	tasks := min(chunks, 4*parallel.Threads())
	size := (chunks + tasks - 1) / tasks
	parallel.For(tasks, 1, func(lo, hi int) {
		// col has room for cols rounded up to whole GEMM panels (≤ 32 wide):
		// the forward pass writes it in packed-panel layout.
		colBuf, matBuf := getScratch(g.ckk()*(cols+32)), getScratch(g.o*cols)
		defer putScratch(colBuf)
		defer putScratch(matBuf)
		for task := lo; task < hi; task++ {
			for c := task * size; c < min(chunks, (task+1)*size); c++ {
				b0 := c * per
				nb := min(per, g.n-b0)
				f(task, b0, nb, (*colBuf)[:g.ckk()*nb*g.ohw()], (*matBuf)[:g.o*nb*g.ohw()])
			}
		}
	})
	return tasks
}

// im2colChunk fills col (rows of nb·OH·OW) from images b0…b0+nb−1 of x.
func (g convGeom) im2colChunk(col, x []float32, b0, nb int) {
	chw, ohw := g.c*g.h*g.w, g.ohw()
	for j := range nb {
		g.im2col(col[j*ohw:], nb*ohw, x[(b0+j)*chw:(b0+j+1)*chw])
	}
}

// gatherChunk copies the (O, OH·OW) planes of images b0… of y (N, O, OH, OW)
// side by side into mat (O × nb·OH·OW).
func (g convGeom) gatherChunk(mat, y []float32, b0, nb int) {
	ohw := g.ohw()
	for j := range nb {
		img := y[(b0+j)*g.o*ohw:]
		for o := range g.o {
			copy(mat[o*nb*ohw+j*ohw:o*nb*ohw+(j+1)*ohw], img[o*ohw:(o+1)*ohw])
		}
	}
}

func cpuConv2d(op Op, out, x, w, bias *Tensor) {
	g := newConvGeom(x.shape, w.shape, out.shape, op.Stride, op.Pad)
	ckk, ohw := g.ckk(), g.ohw()
	if g.n == 0 || ohw == 0 || g.o == 0 {
		return
	}
	if alg := g.winograd(); alg != nil {
		winogradConv2d(alg, g, out, x, w, bias)
		return
	}
	if g.pointwise() {
		// Through Wᵀ (C × O, transposed once): the GEMM reads op(A) = W
		// column by column, contiguous, instead of six rows C apart per
		// step (20 → 40 GFLOP/s at 64 channels 14×14).
		wtp := getScratch(g.o * g.c)
		wt := (*wtp)[:g.o*g.c]
		for o := range g.o {
			for c, v := range w.data[o*g.c : (o+1)*g.c] {
				wt[c*g.o+o] = v
			}
		}
		defer putScratch(wtp)
		parallel.For(g.n, 1, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				img := out.data[j*g.o*ohw : (j+1)*g.o*ohw]
				sgemm(true, false, g.o, ohw, g.c, 1, wt, g.o, x.data[j*g.c*ohw:(j+1)*g.c*ohw], ohw, 0, img, ohw)
				if bias == nil {
					continue
				}
				bv := bias.data[:g.o]
				if len(bias.data) > g.o { // per-sample bias (N, O)
					bv = bias.data[j*g.o : (j+1)*g.o]
				}
				for o, b := range bv {
					row := img[o*ohw : (o+1)*ohw]
					vec.AddScalar(row, row, b)
				}
			}
		})
		return
	}
	nr := gemm.PanelWidth()
	g.forChunks(func(_, b0, nb int, col, mat []float32) {
		cols := nb * ohw
		panels := col[:cap(col)][:(cols+nr-1)/nr*nr*ckk]
		row := getScratch(cols)
		g.im2colPanels(panels, *row, x.data, b0, nb, nr)
		putScratch(row)
		gemm.SgemmPackedB(false, g.o, cols, ckk, nr, 1, w.data, max(ckk, 1), panels, 0, mat, cols)
		for j := range nb { // scatter to NCHW, adding the bias
			img := out.data[(b0+j)*g.o*ohw:]
			for o := range g.o {
				dst, src := img[o*ohw:(o+1)*ohw], mat[o*cols+j*ohw:o*cols+(j+1)*ohw]
				if bias == nil {
					copy(dst, src)
					continue
				}
				bv := bias.data[o]
				if len(bias.data) > g.o { // per-sample bias (N, O)
					bv = bias.data[(b0+j)*g.o+o]
				}
				for i, v := range src {
					dst[i] = v + bv
				}
			}
		}
	})
}

func cpuConv2dGradInput(op Op, dx, dy, w *Tensor) {
	g := newConvGeom(dx.shape, w.shape, dy.shape, op.Stride, op.Pad)
	ckk, ohw, chw := g.ckk(), g.ohw(), g.c*g.h*g.w
	if g.n == 0 || chw == 0 {
		return
	}
	if ohw == 0 || g.o == 0 {
		scaleInPlace(dx.data, op.Beta)
		return
	}
	if alg := g.winogradGradInput(); alg != nil {
		winogradConv2dGradInput(alg, g, dx, dy, w, op.Beta)
		return
	}
	if g.pointwise() {
		parallel.For(g.n, 1, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				sgemm(true, false, g.c, ohw, g.o, 1, w.data, g.c, dy.data[j*g.o*ohw:(j+1)*g.o*ohw], ohw,
					op.Beta, dx.data[j*chw:(j+1)*chw], ohw)
			}
		})
		return
	}
	g.forChunks(func(_, b0, nb int, col, mat []float32) {
		g.gatherChunk(mat, dy.data, b0, nb)
		cols := nb * ohw
		sgemm(true, false, ckk, cols, g.o, 1, w.data, max(ckk, 1), mat, cols, 0, col, cols)
		for j := range nb {
			img := dx.data[(b0+j)*chw : (b0+j+1)*chw]
			scaleInPlace(img, op.Beta)
			g.col2im(img, col[j*ohw:], cols)
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
	ckk, ohw := g.ckk(), g.ohw()
	scaleInPlace(dw.data, op.Beta)
	if g.n == 0 || ohw == 0 || len(dw.data) == 0 {
		return
	}
	if alg := g.winogradGradWeight(); alg != nil {
		winogradConv2dGradWeight(alg, g, dw, x, dy)
		return
	}
	if g.pointwise() {
		// A fixed number of partial sums over runs of images, added in
		// order: the result does not depend on the thread count.
		tasks := min(g.n, pointwiseTasks)
		partial := make([]*[]float32, tasks)
		parallel.For(tasks, 1, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				partial[t] = getScratch(len(dw.data))
				p := (*partial[t])[:len(dw.data)]
				for j := t * g.n / tasks; j < (t+1)*g.n/tasks; j++ {
					beta := float32(1)
					if j == t*g.n/tasks {
						beta = 0
					}
					sgemm(false, true, g.o, g.c, ohw, 1, dy.data[j*g.o*ohw:(j+1)*g.o*ohw], ohw,
						x.data[j*g.c*ohw:(j+1)*g.c*ohw], ohw, beta, p, g.c)
				}
			}
		})
		for _, p := range partial {
			vec.Acc(dw.data, (*p)[:len(dw.data)])
			putScratch(p)
		}
		return
	}
	// One partial weight gradient per task, summed at the end.
	per := g.chunk()
	maxTasks := min((g.n+per-1)/per, 4*parallel.Threads())
	partial := make([]*[]float32, maxTasks)
	for i := range partial {
		partial[i] = getScratch(len(dw.data))
		clear(*partial[i])
	}
	tasks := g.forChunks(func(task, b0, nb int, col, mat []float32) {
		g.im2colChunk(col, x.data, b0, nb)
		g.gatherChunk(mat, dy.data, b0, nb)
		cols := nb * ohw
		sgemm(false, true, g.o, ckk, cols, 1, mat, cols, col, cols, 1, *partial[task], ckk)
	})
	for _, p := range partial[:tasks] {
		for i, v := range *p {
			dw.data[i] += v
		}
	}
	for _, p := range partial {
		putScratch(p)
	}
}

// cpuBiasGrad adds Σ_{n,p} dy into db (O) as autograd summed a bias gradient
// before the fused op: dy summed over (0, 2, 3) by cpuReduce, then added, so
// the CPU's training is bit for bit what it was.
func cpuBiasGrad(db, dy *Tensor) {
	sum := &Tensor{shape: []int{1, db.shape[0], 1, 1}, data: make([]float32, db.shape[0])}
	cpuReduce(Op{Kind: OpSum, Axes: []int{0, 2, 3}}, sum, dy)
	for i, v := range sum.data {
		db.data[i] += v
	}
}
