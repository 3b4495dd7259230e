package tensor

import (
	"holdgo/internal/gemm"
	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// Winograd convolution F(m×m, 3×3) for 3×3, stride-1, pad-1 convolutions
// (Lavin & Gray 2015, "Fast Algorithms for Convolutional Neural Networks",
// arXiv:1509.09308). The output is cut into m×m tiles; tile t of channel o is
//
//	Y = Aᵀ [ Σ_c (G g_{o,c} Gᵀ) ⊙ (Bᵀ d_{c,t} B) ] A
//
// with d_{c,t} the α×α input patch under the tile (α = m+2, zero outside the
// image). For each of the α² positions ξ of the transformed tile the sum over
// c is one GEMM, M[ξ] (O × tiles) = U[ξ] (O × C) · V[ξ] (C × tiles), run by
// internal/gemm: F(2,3) makes 16 GEMMs with 9·4/16 = 2.25× fewer
// multiplications than im2col's, F(4,3) 36 GEMMs with 9·16/36 = 4× fewer.
//
// The weight transform U = G g Gᵀ is computed per call (weights change every
// step). Tiles are processed in chunks of about winoTileTarget tiles (tiles of
// consecutive images joined): the input transform writes V straight into the
// GEMM's packed-panel layout, the α² GEMMs run, and the output transform
// writes the chunk's outputs (with the bias, or β·out for the input
// gradient). Chunks run in parallel; a call with fewer chunks than threads
// splits each phase of a chunk instead (channels, GEMMs, output channels).
//
// The input gradient of such a convolution is the same convolution of dy
// with the weights flipped in space and transposed (O ↔ C), so it runs the
// same code. The weight gradient stays im2col + GEMM.
//
// The input transform is written out by hand (the 1-D transforms below,
// with shared subexpressions), the weight and output transforms run from the
// matrices g and at (transformWeights, outputTransform); winograd_test.go
// checks them against the matrices
// of winoF23/winoF43, which are those of the paper (F(2,3): §4.1; F(4,3):
// §4.2, interpolation points 0, ±1, ±2, ∞, as wincnn generates them).

// winoAlgo is one F(m×m, 3×3) algorithm.
type winoAlgo struct {
	name     string
	m, alpha int
	// bt (α×α), g (α×3) and at (m×α) as in the source; the fast transforms
	// below must equal them (TestWinogradTransformsMatchMatrices).
	bt, g, at [][]float64
}

var winoF23 = &winoAlgo{
	name: "F(2,3)", m: 2, alpha: 4,
	bt: [][]float64{
		{1, 0, -1, 0},
		{0, 1, 1, 0},
		{0, -1, 1, 0},
		{0, 1, 0, -1},
	},
	g: [][]float64{
		{1, 0, 0},
		{0.5, 0.5, 0.5},
		{0.5, -0.5, 0.5},
		{0, 0, 1},
	},
	at: [][]float64{
		{1, 1, 1, 0},
		{0, 1, -1, -1},
	},
}

var winoF43 = &winoAlgo{
	name: "F(4,3)", m: 4, alpha: 6,
	bt: [][]float64{
		{4, 0, -5, 0, 1, 0},
		{0, -4, -4, 1, 1, 0},
		{0, 4, -4, -1, 1, 0},
		{0, -2, -1, 2, 1, 0},
		{0, 2, -1, -2, 1, 0},
		{0, 4, 0, -5, 0, 1},
	},
	g: [][]float64{
		{1.0 / 4, 0, 0},
		{-1.0 / 6, -1.0 / 6, -1.0 / 6},
		{-1.0 / 6, 1.0 / 6, -1.0 / 6},
		{1.0 / 24, 1.0 / 12, 1.0 / 6},
		{1.0 / 24, -1.0 / 12, 1.0 / 6},
		{0, 0, 1},
	},
	at: [][]float64{
		{1, 1, 1, 1, 1, 0},
		{0, 1, -1, 2, -2, 0},
		{0, 1, 1, 4, 4, 0},
		{0, 1, -1, 8, -8, 1},
	},
}

// 1-D transforms: Bᵀ·d of one column (the weight and output transforms run
// from the matrices g and at: transformWeights, outputTransform).

func bt23(d0, d1, d2, d3 float32) (t0, t1, t2, t3 float32) {
	return d0 - d2, d1 + d2, d2 - d1, d1 - d3
}

func bt43(d0, d1, d2, d3, d4, d5 float32) (t0, t1, t2, t3, t4, t5 float32) {
	a, b := d4-4*d2, d3-4*d1
	c, e := d4-d2, 2*(d3-d1)
	return 4*d0 - 5*d2 + d4, a + b, a - b, c + e, c - e, 4*d1 - 5*d3 + d5
}

// inTransform sets v = Bᵀ d B. The call is direct (not through alg.in) so
// that v and d stay on the caller's stack: a pointer passed through a
// function value escapes, and two heap allocations per tile and channel
// made the allocator and the page faults of its fresh memory cost a third
// of the forward pass.
func (alg *winoAlgo) inTransform(v, d *[36]float32) {
	if alg.m == 4 {
		winoIn43(v, d)
	} else {
		winoIn23(v, d)
	}
}

// 2-D transforms: the 1-D one on the columns, then on the rows.

func winoIn23(v, d *[36]float32) {
	var t [16]float32
	for j := range 4 {
		t[j], t[4+j], t[8+j], t[12+j] = bt23(d[j], d[4+j], d[8+j], d[12+j])
	}
	for i := range 4 {
		r := t[4*i : 4*i+4 : 4*i+4]
		v[4*i], v[4*i+1], v[4*i+2], v[4*i+3] = bt23(r[0], r[1], r[2], r[3])
	}
}

func winoIn43(v, d *[36]float32) {
	var t [36]float32
	for j := range 6 {
		t[j], t[6+j], t[12+j], t[18+j], t[24+j], t[30+j] = bt43(d[j], d[6+j], d[12+j], d[18+j], d[24+j], d[30+j])
	}
	for i := range 6 {
		r := t[6*i : 6*i+6 : 6*i+6]
		v[6*i], v[6*i+1], v[6*i+2], v[6*i+3], v[6*i+4], v[6*i+5] = bt43(r[0], r[1], r[2], r[3], r[4], r[5])
	}
}

// winoTileTarget is the number of tiles per chunk: the GEMMs are about this
// wide (a multiple of every kernel's panel width), and a chunk's transformed
// input and GEMM outputs, α²·(C+O)·tiles floats, stay within L2/L3.
const winoTileTarget = 128

// winoTileMin is the fewest tiles of a chunk when chunks are made smaller for
// several threads.
const winoTileMin = 64

// winoConv is one Winograd convolution: src (N, CI, H, W) → dst (N, CO, H, W)
// with the transformed weights u (α² × CO × CI).
type winoConv struct {
	alg             *winoAlgo
	n, ci, co, h, w int
	th, tw          int        // tiles per image along y and x
	nr              int        // the GEMM's panel width
	uBuf            *[]float32 // pooled storage of up
	up              []float32  // the transformed weight, packed for the GEMM (setWeights)
	mr              int        // up's panel height
	src, dst, bias  []float32
	perSampleBias   bool
	// vByChannel selects the weight gradient's layout of V (inputTransform):
	// the packed panels of Vᵀ (tiles × CI), nr channels wide.
	vByChannel bool
	// padded is src with a zero border (padInput), hp×wp per plane, for
	// the eight-patch transform: every tile's 6×6 patch lies inside it.
	padded            []float32
	padBuf            *[]float32
	hp, wp            int
	beta              float32 // dst = beta·dst + conv (forward: 0)
	tiles, chunkTiles int
	vStride, mStride  int // per-ξ strides of a chunk's V and M buffers
}

func newWinoConv(alg *winoAlgo, n, ci, co, h, w int) *winoConv {
	wc := &winoConv{alg: alg, n: n, ci: ci, co: co, h: h, w: w, nr: gemm.PanelWidth()}
	wc.th, wc.tw = (h+alg.m-1)/alg.m, (w+alg.m-1)/alg.m
	wc.tiles = n * wc.th * wc.tw
	per := winoTileTarget
	if k := parallel.Threads(); k > 1 {
		// Two chunks per thread at least, of whole panels: one chunk per
		// thread left a 32×32, 128-channel layer (N = 4) at 1.12× on two
		// threads, each chunk's V and M buffers (4.7 MiB) past L2.
		per = min(per, max(winoTileMin, (wc.tiles+2*k-1)/(2*k)+wc.nr-1)/wc.nr*wc.nr)
	}
	if parts := (wc.tiles + per - 1) / per; parts < parallel.Threads() {
		// fewer chunks than threads: one chunk of everything, phases split.
		per = wc.tiles
	}
	wc.chunkTiles = per
	// The α² buffers of V and of M are a cache line more than their size
	// apart: at a multiple of 4 KiB the transforms' α² loads or stores per
	// tile would all fall into one L1 set.
	wc.vStride = (per+wc.nr-1)/wc.nr*wc.nr*ci + 16
	wc.mStride = co*per + 16
	return wc
}

// transformWeights sets U[ξ][o][c] = (G w[o][c] Gᵀ)[ξ] for an OIHW weight w
// (forward), or, with flip, U[ξ][c][o] = (G w̃ Gᵀ)[ξ] for w̃[ky][kx] =
// w[o][c][2−ky][2−kx] (the input gradient's weight); co × ci is U[ξ]'s size.
// Each U[ξ] is written packed for the GEMM (gemm.PackA's layout for panels
// of mr rows, packedStride(mr) apart in u): element e = (p·ci + c)·mr + i of a
// plane is U[ξ][p·mr+i][c], zero for rows past co.
//
// It runs over blocks of winoWeightBlock elements as whole rows: the nine
// taps of the block's kernels are gathered into nine rows, G is applied down
// the columns (3·α rows, each a combination of three tap rows) and then along
// the rows straight into the α² planes of u, the combinations by vec.Mix
// (SIMD, float64 arithmetic rounded once). A kernel-at-a-time transform with
// α² scattered stores per kernel took 4–5× longer: at 256 channels it cost as
// much as the α² GEMMs. Writing the planes packed costs nothing more (the
// gather reads the kernels in panel order) and lets the GEMM stream each
// panel of U[ξ] from one sequential run.
func (wc *winoConv) transformWeights(u, w []float32, flip bool, mr int) {
	n := gemm.PackedALen(wc.co, wc.ci, mr)
	const blk = winoWeightBlock
	parallel.For((n+blk-1)/blk, 1, func(lo, hi int) {
		wc.transformRange(u, wc.packedStride(mr), 0, w, flip, mr, lo*blk, min(n, hi*blk))
	})
}

// transformRange is transformWeights for the elements [e0, e1) of every
// packed plane, on the calling goroutine: plane ξ's element e goes to
// u[ξ·stride + e − base].
func (wc *winoConv) transformRange(u []float32, stride, base int, w []float32, flip bool, mr, e0, e1 int) {
	if wc.alg.alpha == 6 {
		wc.transformRange43(u, stride, base, w, flip, mr, e0, e1)
		return
	}
	alpha := wc.alg.alpha
	g := make([]float64, 0, 3*alpha) // G row-major, the coefficients of vec.Mix
	for _, row := range wc.alg.g {
		g = append(g, row...)
	}
	panel := wc.ci * mr
	const blk = winoWeightBlock
	bufp := getScratch((9 + 3*alpha) * blk)
	buf := *bufp
	taps, cols := make([][]float32, 9), make([][]float32, 3*alpha)
	outs, ins := make([][]float32, 0, vec.MaxMixRows), make([][]float32, 3)
	// mix sets rows dst[r0:r1] from ins with the coefficient rows r0..r1 of G.
	mix := func(dst func(r int) []float32) {
		for r0 := 0; r0 < alpha; r0 += vec.MaxMixRows {
			r1 := min(alpha, r0+vec.MaxMixRows)
			outs = outs[:0]
			for r := r0; r < r1; r++ {
				outs = append(outs, dst(r))
			}
			vec.Mix(outs, g[3*r0:3*r1], ins)
		}
	}
	for b0 := e0; b0 < e1; b0 += blk {
		b1 := min(e1, b0+blk)
		m := b1 - b0
		for t := range taps {
			taps[t] = buf[t*blk : t*blk+m]
		}
		for t := range cols {
			cols[t] = buf[(9+t)*blk : (9+t)*blk+m]
		}
		// Element e is U[ξ][o][c] with o = p·mr + r: counters, not a
		// division per element.
		p, cn, r := b0/panel, b0%panel/mr, b0%mr
		for i := range m {
			o, c := p*mr+r, cn
			if r++; r == mr {
				if r, cn = 0, cn+1; cn == wc.ci {
					cn, p = 0, p+1
				}
			}
			switch {
			case o >= wc.co: // a ragged panel's padding rows
				for t := range 9 {
					taps[t][i] = 0
				}
			case flip: // w is (ci=O, co=C, 3, 3)
				k := w[(c*wc.co+o)*9 : (c*wc.co+o)*9+9]
				for t := range 9 {
					taps[t][i] = k[8-t]
				}
			default:
				k := w[(o*wc.ci+c)*9 : (o*wc.ci+c)*9+9]
				for t := range 9 {
					taps[t][i] = k[t]
				}
			}
		}
		// Down the columns: cols[r·3+kx] = Σ_ky G[r][ky]·tap(ky, kx).
		for kx := range 3 {
			ins[0], ins[1], ins[2] = taps[kx], taps[3+kx], taps[6+kx]
			mix(func(r int) []float32 { return cols[r*3+kx] })
		}
		// Along the rows: u[r·α+c] = Σ_kx G[c][kx]·cols[r·3+kx].
		for r := range alpha {
			ins[0], ins[1], ins[2] = cols[r*3], cols[r*3+1], cols[r*3+2]
			mix(func(c int) []float32 {
				off := (r*alpha+c)*stride + b0 - base
				return u[off : off+m]
			})
		}
	}
	putScratch(bufp)
}

// g43 is G·(a, b, c)ᵀ for F(4,3)'s G (rows (1/4, 0, 0), −(1, 1, 1)/6,
// −(1, −1, 1)/6, (1/24, 1/12, 1/6), (1/24, −1/12, 1/6), (0, 0, 1)), factored
// to share the sums: s = a + c, p = a/24 + c/6, q = b/12; r = (a/4, −(s+b)/6,
// −(s−b)/6, p+q, p−q, c). In float32, each product rounded on its own (the
// conversions forbid fused multiply-adds), as the assembly kernels
// (winoW43, wino_asm_gen.go) compute it, so both give the same bits.
func g43(a, b, c float32) (r0, r1, r2, r3, r4, r5 float32) {
	s := a + c
	p := float32(a*(1.0/24)) + float32(c*(1.0/6))
	q := float32(b * (1.0 / 12))
	return float32(a * 0.25), float32((s + b) * (-1.0 / 6)), float32((s - b) * (-1.0 / 6)), p + q, p - q, c
}

// transformRange43 is transformRange for F(4,3): U = G k Gᵀ through g43 down
// the kernel's columns, then along the rows. Runs of winoWLanes elements go
// to the SIMD kernel (winoW43), which gathers the lanes' kernels itself;
// the rest, and every element where there is no kernel, run the scalar g43.
// It replaced the vec.Mix transform (float64, rounded once; 1.6 ms for a
// 256 → 256 weight, one thread, AVX-512), whose gather and conversions made
// the weight transforms a seventh of an ncsnpp-cifar10 training step.
func (wc *winoConv) transformRange43(u []float32, stride, base int, w []float32, flip bool, mr, e0, e1 int) {
	var (
		zero [9]float32
		ks   [16]*float32
		buf  [432]float32
	)
	lanes := winoWLanes()
	panel := wc.ci * mr
	// Element e is U[ξ][o][c] with o = p·mr + r: counters, not a division
	// per element.
	p, c, r := e0/panel, e0%panel/mr, e0%mr
	kernel := func() *[9]float32 {
		o := p*mr + r
		k := &zero
		switch {
		case o >= wc.co: // a ragged panel's padding rows
		case flip: // w is (ci=O, co=C, 3, 3)
			k = (*[9]float32)(w[(c*wc.co+o)*9:])
		default:
			k = (*[9]float32)(w[(o*wc.ci+c)*9:])
		}
		if r++; r == mr {
			if r, c = 0, c+1; c == wc.ci {
				c, p = 0, p+1
			}
		}
		return k
	}
	for e := e0; e < e1; {
		if lanes > 0 && e+lanes <= e1 {
			for l := range lanes {
				ks[l] = &kernel()[0]
			}
			winoW43(u, e-base, stride, &ks, flip, &buf)
			e += lanes
			continue
		}
		k := kernel()
		var t [9]float32
		for i := range t {
			if flip {
				t[i] = k[8-i]
			} else {
				t[i] = k[i]
			}
		}
		var col [6][3]float32
		for kx := range 3 {
			col[0][kx], col[1][kx], col[2][kx], col[3][kx], col[4][kx], col[5][kx] = g43(t[kx], t[3+kx], t[6+kx])
		}
		off := e - base
		for i, row := range col {
			var v [6]float32
			v[0], v[1], v[2], v[3], v[4], v[5] = g43(row[0], row[1], row[2])
			for j, x := range v {
				u[(6*i+j)*stride+off] = x
			}
		}
		e++
	}
}

// setWeights sets up to w's transform (transformWeights, packed for the
// GEMM), kept with w while w is frozen (Freeze), else in pooled storage that
// release returns.
func (wc *winoConv) setWeights(w *Tensor, flip bool) {
	mr := gemm.PanelHeight()
	n := wc.alg.alpha * wc.alg.alpha * wc.packedStride(mr)
	fill := func(u []float32) { wc.transformWeights(u, w.data, flip, mr) }
	wc.mr = mr
	if up, ok := frozenForm(w, winoWeightKey{wc.alg, flip, mr}, n, fill); ok {
		wc.up = up
		return
	}
	wc.uBuf = getScratch(n)
	wc.up = *wc.uBuf
	fill(wc.up)
}

// packedStride is the distance between the packed matrices U[ξ] of a frozen
// weight for panels of mr rows, padded by a cache line as uStride is.
func (wc *winoConv) packedStride(mr int) int { return gemm.PackedALen(wc.co, wc.ci, mr) + 16 }

// winoWeightKey names a frozen weight's transform: the algorithm, whether it
// is the input gradient's flipped, transposed weight (the shapes follow from
// the weight's) and the GEMM kernel's panel height it is packed for.
type winoWeightKey struct {
	alg  *winoAlgo
	flip bool
	mr   int
}

// winoWeightBlock is the number of kernels transformWeights transforms as one
// set of rows: its (9 + 3α) rows stay within L1/L2.
const winoWeightBlock = 256

// uStride is the distance between the α² matrices U[ξ] (CO × CI), padded by
// a cache line against L1 set conflicts (see vStride).
func (wc *winoConv) uStride() int { return wc.co*wc.ci + 16 }

// run computes dst from src for every chunk of tiles.
func (wc *winoConv) run() {
	chunks := (wc.tiles + wc.chunkTiles - 1) / wc.chunkTiles
	a2 := wc.alg.alpha * wc.alg.alpha
	if chunks == 1 {
		v, m := getScratch(a2*wc.vStride), getScratch(a2*wc.mStride)
		wc.chunk(*v, *m, 0, wc.tiles, true)
		putScratch(v)
		putScratch(m)
		return
	}
	parallel.For(chunks, 1, func(lo, hi int) {
		v, m := getScratch(a2*wc.vStride), getScratch(a2*wc.mStride)
		for c := lo; c < hi; c++ {
			t0 := c * wc.chunkTiles
			wc.chunk(*v, *m, t0, min(wc.tiles, t0+wc.chunkTiles), false)
		}
		putScratch(v)
		putScratch(m)
	})
}

// chunk runs tiles [t0, t1): input transform into v, the α² GEMMs into m,
// output transform; split runs each phase over the worker pool.
func (wc *winoConv) chunk(v, m []float32, t0, t1 int, split bool) {
	phase := func(n int, f func(lo, hi int)) {
		if split {
			parallel.For(n, 1, f)
		} else {
			f(0, n)
		}
	}
	nt := t1 - t0
	a2 := wc.alg.alpha * wc.alg.alpha
	phase(wc.ci, func(lo, hi int) { wc.inputTransform(v, t0, t1, lo, hi) })
	phase(a2, func(lo, hi int) {
		for xi := lo; xi < hi; xi++ {
			vx, mx := v[xi*wc.vStride:(xi+1)*wc.vStride], m[xi*wc.mStride:xi*wc.mStride+wc.co*nt]
			gemm.SgemmPackedAB(wc.co, nt, wc.ci, wc.mr, wc.nr, 1, wc.up[xi*wc.packedStride(wc.mr):], vx, 0, mx, nt)
		}
	})
	phase(wc.co, func(lo, hi int) { wc.outputTransform(m, t0, t1, lo, hi) })
}

// inputTransform writes V[ξ] for channels [c0, c1) of tiles [t0, t1) in
// packed-panel layout: v[ξ·vStride + (p·CI + c)·nr + j] for tile t0 + p·nr + j
// (V as the GEMM's B, CI × tiles), or with vByChannel
// v[ξ·vStride + (p·nt + t−t0)·nr + j] for channel p·nr + j (Vᵀ, tiles × CI).
func (wc *winoConv) inputTransform(v []float32, t0, t1, c0, c1 int) {
	a2 := wc.alg.alpha * wc.alg.alpha
	per := wc.th * wc.tw
	nt := t1 - t0
	// F(4,3) transforms eight patches at a time where the SIMD kernel runs:
	// eight consecutive tiles (forward layout) or channels (vByChannel),
	// whose results fill eight consecutive lanes of a panel row.
	x8 := wc.padded != nil
	var buf [288]float32
	var offs [8]int
	if wc.vByChannel {
		// Tile by tile, the channels inner: consecutive channels fill one
		// panel row, so the α² store streams stay within a few cache lines.
		img, ty, tx := t0/per, t0%per/wc.tw, t0%wc.tw
		for t := t0; t < t1; t++ {
			off := func(c int) int { return (c/wc.nr*nt+t-t0)*wc.nr + c%wc.nr }
			c := c0
			if x8 {
				for ; c < c1 && c%8 != 0; c++ {
					wc.inputTile(v, c, img, ty, tx, off(c))
				}
				hwp := wc.hp * wc.wp
				for ; c+8 <= c1; c += 8 {
					base := (img*wc.ci+c)*hwp + ty*4*wc.wp + tx*4
					for l := range offs {
						offs[l] = base + l*hwp
					}
					winoIn43x8G(v, off(c), wc.vStride, wc.padded, &offs, wc.wp, &buf)
				}
			}
			for ; c < c1; c++ {
				wc.inputTile(v, c, img, ty, tx, off(c))
			}
			if tx++; tx == wc.tw {
				if tx, ty = 0, ty+1; ty == wc.th {
					ty, img = 0, img+1
				}
			}
		}
	} else {
		// The eight-patch kernel reads channel c of the chunk's images from a
		// small padded copy made just before (padChunk), which stays in L1/L2:
		// a padded copy of the whole input, written and read back through
		// memory, cost about a tenth of an ncsnpp-small forward pass.
		var local8 []float32
		img0 := t0 / per
		if x8 = wc.x8(); x8 {
			hp, wp := wc.th*4+2, wc.tw*4+2
			lb := getScratch(((t1-1)/per-img0+1)*hp*wp + 8)
			defer putScratch(lb)
			local8 = *lb
		}
		for c := c0; c < c1; c++ {
			img, ty, tx := t0/per, t0%per/wc.tw, t0%wc.tw
			next := func() {
				if tx++; tx == wc.tw {
					if tx, ty = 0, ty+1; ty == wc.th {
						ty, img = 0, img+1
					}
				}
			}
			local := 0
			if x8 && nt >= 8 {
				wp := wc.tw*4 + 2
				hwp := (wc.th*4 + 2) * wp
				wc.padChunk(local8, c, t0, t1)
				for ; local+8 <= nt; local += 8 {
					for l := range offs {
						offs[l] = (img-img0)*hwp + ty*4*wp + tx*4
						next()
					}
					winoIn43x8G(v, (local/wc.nr*wc.ci+c)*wc.nr+local%wc.nr, wc.vStride, local8, &offs, wp, &buf)
				}
			}
			for ; local < nt; local++ {
				wc.inputTile(v, c, img, ty, tx, (local/wc.nr*wc.ci+c)*wc.nr+local%wc.nr)
				next()
			}
		}
	}
	// Zero the lanes of the last panel past the chunk's tiles (or channels):
	// the kernel reads them.
	if pad := wc.ci % wc.nr; wc.vByChannel && pad != 0 && c1 == wc.ci {
		p := wc.ci / wc.nr
		for xi := range a2 {
			for t := range nt {
				row := v[xi*wc.vStride+(p*nt+t)*wc.nr:]
				clear(row[pad:wc.nr])
			}
		}
		return
	}
	if wc.vByChannel {
		return
	}
	if pad := nt % wc.nr; pad != 0 {
		p := (t1 - t0) / wc.nr
		for xi := range a2 {
			for c := c0; c < c1; c++ {
				row := v[xi*wc.vStride+(p*wc.ci+c)*wc.nr:]
				clear(row[pad:wc.nr])
			}
		}
	}
}

// inputTile transforms the α×α patch of channel c of image img under tile
// (ty, tx) (zero outside the image) and stores its α² values at v[off],
// v[off+vStride], ….
func (wc *winoConv) inputTile(v []float32, c, img, ty, tx, off int) {
	alpha, m := wc.alg.alpha, wc.alg.m
	hw := wc.h * wc.w
	var d, tv [36]float32
	y0, x0 := ty*m-1, tx*m-1
	plane := wc.src[(img*wc.ci+c)*hw : (img*wc.ci+c+1)*hw]
	if y0 >= 0 && x0 >= 0 && y0+alpha <= wc.h && x0+alpha <= wc.w {
		if m == 4 {
			in43Interior(v, off, wc.vStride, plane, y0*wc.w+x0, wc.w)
			return
		}
		for r := range alpha {
			copy(d[r*alpha:r*alpha+alpha], plane[(y0+r)*wc.w+x0:(y0+r)*wc.w+x0+alpha])
		}
	} else {
		xlo, xhi := max(0, -x0), min(alpha, wc.w-x0)
		for r := range alpha {
			if y := y0 + r; y >= 0 && y < wc.h && xlo < xhi {
				copy(d[r*alpha+xlo:r*alpha+xhi], plane[y*wc.w+x0+xlo:y*wc.w+x0+xhi])
			}
		}
	}
	wc.alg.inTransform(&tv, &d)
	for _, val := range tv[:alpha*alpha] {
		v[off] = val
		off += wc.vStride
	}
}

// in43Interior is inputTile's F(4,3) transform of a patch inside the image:
// the six rows are read straight from plane (from base, w apart) and the 36
// values stored at v[off], v[off+stride], …, without the copy into a patch
// array (the copies' memmove calls took as long as the arithmetic).
func in43Interior(v []float32, off, stride int, plane []float32, base, w int) {
	r0 := plane[base : base+6 : base+6]
	r1 := plane[base+w : base+w+6 : base+w+6]
	r2 := plane[base+2*w : base+2*w+6 : base+2*w+6]
	r3 := plane[base+3*w : base+3*w+6 : base+3*w+6]
	r4 := plane[base+4*w : base+4*w+6 : base+4*w+6]
	r5 := plane[base+5*w : base+5*w+6 : base+5*w+6]
	var t [36]float32
	for j := range 6 {
		t[j], t[6+j], t[12+j], t[18+j], t[24+j], t[30+j] = bt43(r0[j], r1[j], r2[j], r3[j], r4[j], r5[j])
	}
	_ = v[off+35*stride]
	for i := range 6 {
		q := t[6*i : 6*i+6 : 6*i+6]
		a0, a1, a2, a3, a4, a5 := bt43(q[0], q[1], q[2], q[3], q[4], q[5])
		v[off] = a0
		v[off+stride] = a1
		v[off+2*stride] = a2
		v[off+3*stride] = a3
		v[off+4*stride] = a4
		v[off+5*stride] = a5
		off += 6 * stride
	}
}

// outputTransform writes output channels [o0, o1) of tiles [t0, t1) from
// M[ξ] (CO × nt, row-major, ξ·mStride apart) into dst, cropping tiles at the
// image's edge.
//
// Per output channel it works on whole rows of the chunk's tiles: Aᵀ down the
// columns (m rows from α of M each), then along the rows into m² rows, one
// per position in the tile, both by vec.Mix; then the m² rows are scattered
// into the image. Transforming tile by tile, with α² loads a whole M plane
// apart per tile, took about twice as long.
func (wc *winoConv) outputTransform(mbuf []float32, t0, t1, o0, o1 int) {
	if wc.x8() {
		wc.outputTransform8(mbuf, t0, t1, o0, o1)
		return
	}
	alpha, m := wc.alg.alpha, wc.alg.m
	nt := t1 - t0
	hw, per := wc.h*wc.w, wc.th*wc.tw
	at := make([]float64, 0, m*alpha) // Aᵀ row-major, the coefficients of vec.Mix
	for _, row := range wc.alg.at {
		at = append(at, row...)
	}
	bufp := getScratch((m*alpha + m*m) * nt)
	buf := *bufp
	row := func(i int) []float32 { return buf[i*nt : (i+1)*nt] } // rows m·α + r·m + k hold y[r][k] of every tile
	ins, outs := make([][]float32, alpha), make([][]float32, m)
	for o := o0; o < o1; o++ {
		for j := range alpha { // columns: tmp[i·α+j] = Σ_r Aᵀ[i][r]·M[r·α+j]
			for r := range alpha {
				off := (r*alpha+j)*wc.mStride + o*nt
				ins[r] = mbuf[off : off+nt]
			}
			for i := range m {
				outs[i] = row(i*alpha + j)
			}
			vec.Mix(outs, at, ins)
		}
		for i := range m { // rows: y[i][k] = Σ_j Aᵀ[k][j]·tmp[i·α+j]
			for j := range alpha {
				ins[j] = row(i*alpha + j)
			}
			for k := range m {
				outs[k] = row(m*alpha + i*m + k)
			}
			vec.Mix(outs, at, ins)
		}
		y := buf[m*alpha*nt : (m*alpha+m*m)*nt]
		img, ty, tx := t0/per, t0%per/wc.tw, t0%wc.tw
		for p := range nt {
			var b float32
			if wc.bias != nil {
				if wc.perSampleBias {
					b = wc.bias[img*wc.co+o]
				} else {
					b = wc.bias[o]
				}
			}
			y0, x0 := ty*m, tx*m
			plane := wc.dst[(img*wc.co+o)*hw : (img*wc.co+o+1)*hw]
			rows, cols := min(m, wc.h-y0), min(m, wc.w-x0)
			for r := range rows {
				dr := plane[(y0+r)*wc.w+x0 : (y0+r)*wc.w+x0+cols]
				yr := y[r*m*nt+p:]
				switch wc.beta {
				case 0:
					for i := range dr {
						dr[i] = yr[i*nt] + b
					}
				case 1:
					for i := range dr {
						dr[i] += yr[i*nt] + b
					}
				default:
					for i := range dr {
						dr[i] = wc.beta*dr[i] + yr[i*nt] + b
					}
				}
			}
			if tx++; tx == wc.tw {
				if tx, ty = 0, ty+1; ty == wc.th {
					ty, img = 0, img+1
				}
			}
		}
	}
	putScratch(bufp)
}

// outputTransform8 is outputTransform through the eight-tile kernel (F(4,3),
// float32 arithmetic): per output channel, eight consecutive tiles at a
// time, each tile's four rows stored straight into dst. A tile that the
// image's edge crops (or a lane past the chunk's tiles) is stored into a
// zeroed side buffer instead, and its part inside the image copied from
// there (with β).
func (wc *winoConv) outputTransform8(mbuf []float32, t0, t1, o0, o1 int) {
	nt := t1 - t0
	hw, per := wc.h*wc.w, wc.th*wc.tw
	sidep := getScratch(8 * 16)
	side := (*sidep)[:8*16]
	var (
		rows    [32]*float32
		bias    [8]float32
		tmp     [192]float32
		cropped [8][3]int // image, tile row and column of the lanes in side
	)
	for o := o0; o < o1; o++ {
		img, ty, tx := t0/per, t0%per/wc.tw, t0%wc.tw
		for p := 0; p < nt; p += 8 {
			var inSide uint8 // lanes stored in side that hold a cropped tile
			useSide := false
			for l := range 8 {
				if p+l >= nt {
					for i := range 4 {
						rows[i*8+l] = &side[l*16+i*4]
					}
					useSide = true
					continue
				}
				bias[l] = 0
				if wc.bias != nil {
					if wc.perSampleBias {
						bias[l] = wc.bias[img*wc.co+o]
					} else {
						bias[l] = wc.bias[o]
					}
				}
				y0, x0 := ty*4, tx*4
				if y0+4 <= wc.h && x0+4 <= wc.w {
					base := (img*wc.co+o)*hw + y0*wc.w + x0
					for i := range 4 {
						rows[i*8+l] = &wc.dst[base+i*wc.w]
					}
				} else {
					for i := range 4 {
						rows[i*8+l] = &side[l*16+i*4]
					}
					useSide = true
					inSide |= 1 << l
					cropped[l] = [3]int{img, ty, tx}
				}
				if tx++; tx == wc.tw {
					if tx, ty = 0, ty+1; ty == wc.th {
						ty, img = 0, img+1
					}
				}
			}
			if useSide && wc.beta != 0 {
				clear(side)
			}
			winoOut43x8(mbuf, o*nt+p, wc.mStride, &rows, &bias, &tmp, wc.beta)
			for l := range 8 {
				if inSide&(1<<l) == 0 {
					continue
				}
				img, y0, x0 := cropped[l][0], cropped[l][1]*4, cropped[l][2]*4
				plane := wc.dst[(img*wc.co+o)*hw : (img*wc.co+o+1)*hw]
				for r := range min(4, wc.h-y0) {
					dr := plane[(y0+r)*wc.w+x0 : (y0+r)*wc.w+min(wc.w, x0+4)]
					sr := side[l*16+r*4 : l*16+r*4+4]
					if wc.beta == 0 {
						copy(dr, sr)
						continue
					}
					for i := range dr {
						dr[i] = wc.beta*dr[i] + sr[i]
					}
				}
			}
		}
	}
	putScratch(sidep)
}

func (wc *winoConv) release() {
	if wc.uBuf != nil {
		putScratch(wc.uBuf)
	}
}

// x8 reports whether inputTransform uses the eight-patch SIMD kernel.
func (wc *winoConv) x8() bool { return wc.alg.m == 4 && wc.nr%8 == 0 && winoX8() }

// padInput copies src into padded, each plane with one row and column of
// zeros before it and enough after it for whole tiles ((th·4+2) ×
// (tw·4+2)), when the eight-patch kernel runs: its gather then reads every
// patch as six whole rows, without the edge cases that most tiles of a
// 7×7 to 28×28 image hit (they took 10 % of an ncsnpp-small training step).
// The weight gradient's transform (vByChannel) reads it; the forward and
// input-gradient transform pad each channel of a chunk just before they read
// it (padChunk).
func (wc *winoConv) padInput() {
	if !wc.x8() {
		return
	}
	wc.hp, wc.wp = wc.th*4+2, wc.tw*4+2
	planes, hwp := wc.n*wc.ci, wc.hp*wc.wp
	wc.padBuf = getScratch(planes*hwp + 8) // + the gather's reads past the last row
	wc.padded = *wc.padBuf
	parallel.For(planes, max(1, grain/hwp), func(lo, hi int) {
		for pl := lo; pl < hi; pl++ {
			dst, src := wc.padded[pl*hwp:(pl+1)*hwp], wc.src[pl*wc.h*wc.w:(pl+1)*wc.h*wc.w]
			clear(dst[:wc.wp])
			padRows(dst[wc.wp:], src, wc.h, wc.w, wc.wp)
			clear(dst[(wc.h+1)*wc.wp:])
		}
	})
}

// padChunk writes into dst channel c of the images of tiles [t0, t1) with
// padInput's zero border, one (th·4+2) × (tw·4+2) plane per image from the
// chunk's first, but only the rows the chunk's patches read: for tile rows
// tyA…tyB of an image the padded rows 4·tyA … 4·tyB+5, and the row after
// (the eight-float gather of a row's last patch reads two floats into it);
// the 8 floats after the last plane are zeroed for the same reason.
func (wc *winoConv) padChunk(dst []float32, c, t0, t1 int) {
	per, hp, wp := wc.th*wc.tw, wc.th*4+2, wc.tw*4+2
	img0, img1 := t0/per, (t1-1)/per
	for img := img0; img <= img1; img++ {
		tyA, tyB := 0, wc.th-1
		if img == img0 {
			tyA = t0 % per / wc.tw
		}
		if img == img1 {
			tyB = (t1 - 1) % per / wc.tw
		}
		plane := dst[(img-img0)*hp*wp : (img-img0+1)*hp*wp]
		src := wc.src[(img*wc.ci+c)*wc.h*wc.w : (img*wc.ci+c+1)*wc.h*wc.w]
		// Padded rows rA…rB−1: row 0 and rows from h+1 on are zeros, row r
		// in between is image row r − 1 (padRows: one call per plane).
		rA, rB := 4*tyA, min(hp, 4*tyB+7)
		if rA == 0 {
			clear(plane[:wp])
			rA = 1
		}
		if d := min(rB, wc.h+1); d > rA {
			padRows(plane[rA*wp:], src[(rA-1)*wc.w:], d-rA, wc.w, wp)
			rA = d
		}
		if rB > rA {
			clear(plane[rA*wp : rB*wp])
		}
	}
	end := (img1 - img0 + 1) * hp * wp
	clear(dst[end : end+8])
}

// padRowsGo is padRows in Go: dst[r·wp] = 0, dst[r·wp+1 : r·wp+1+w] = src[r·w : (r+1)·w] and zeros to
// dst[(r+1)·wp] for r < rows.
func padRowsGo(dst, src []float32, rows, w, wp int) {
	for r := range rows {
		line := dst[r*wp : (r+1)*wp]
		line[0] = 0
		copy(line[1:], src[r*w:(r+1)*w])
		clear(line[1+w:])
	}
}

func (wc *winoConv) releasePadded() {
	if wc.padBuf != nil {
		putScratch(wc.padBuf)
		wc.padBuf, wc.padded = nil, nil
	}
}

// winoMode forces an algorithm in tests and benchmarks: winoAuto (the rule of
// winogradFor), winoOff (im2col), winoForce23, winoForce43.
type winoModeKind int

const (
	winoAuto winoModeKind = iota
	winoOff
	winoForce23
	winoForce43
)

var winoMode = winoAuto

// winogradFor returns the Winograd algorithm for a convolution of n images
// ci → co channels, h×w, with a 3×3 kernel, stride 1 and pad 1 (the caller
// checks these), or nil for im2col.
//
// The rule, measured with BenchmarkConv3x3 (one thread, AVX2, N = 4; the
// numbers in docs/ncsnpp.md): F(4,3) when both channel counts are ≥ 128 and
// the call has ≥ 1024 output pixels (≥ 64 tiles): 2.0× im2col's speed at
// 128 channels 32×32, 1.0–1.8× at 256 channels 16×16. Below that the
// per-call weight transform (U is α²/9 = 4× the weight) and the transforms'
// scalar Go loops cost more than the GEMM flops saved: 256 channels at 8×8 or
// 4×4 (N = 4) run 1.5–6× slower than im2col, 9 → 128 channels 2–3× slower,
// and 32–64 channels came out even. F(2,3) was never the fastest of the three
// on these shapes, so the rule does not pick it (it stays tested, forced).
//
// With the weight transform as row combinations (transformWeights, ~2×
// faster) F(4,3) also pays at 64 channels on images of 7×7 and more
// (ncsnpp-small, N = 32: 10–20% less CPU time per convolution at 14×14 and
// 7×7; the ncsnpp-small forward pass 24.0 → 15.9 ms CPU per image, median of
// 3 interleaved runs, one thread). 32 channels at 28×28 stay im2col (F(4,3)
// 1.5× slower there).
//
// The second case admits calls of ≥ 256 output pixels (N = 4 at 8×8) with
// both channel counts ≥ 128 (at first for the forward pass and the weight
// gradient only: the input gradient's flipped weight transform cost more
// then, see below). Measured after the
// input transform's direct path, one thread, AVX2, N = 4: weight gradient
// F(4,3) 3.9 vs im2col 5.5 ms at 256 channels 8×8, 8.1 vs 11.5 ms at 512 →
// 256; forward 4.1–5.1 vs 5.0–6.9 ms and 8.4–8.9 vs 10.1 ms; input gradient
// 5.7 vs 5.1 ms. At 4×4 im2col stays (F(4,3) equal or slower). Since the
// weight transform became a SIMD kernel (transformRange43) the input
// gradient is admitted too: 256 → 256 at 8×8 (N = 4, one thread) 2.2 vs
// 2.7 ms at AVX-512, 2.6 vs 4.0 at AVX2; 512 → 256 4.3 vs 5.4 and 6.4 vs
// 8.1 ms; at 4×4 F(4,3) is still 2.5× slower (forward, input gradient) or
// even (weight gradient: 1.25 vs 1.34 ms at AVX-512, 1.90 vs 1.63 at AVX2).
//
// With the SIMD input transform F(4,3) also paid for 32-channel layers on
// 28×28 images (ncsnpp-small, N = 32; min of 4, one thread): 32 → 32
// forward 7.6 vs 15.2 ms, input gradient 8.7 vs 13.6, weight gradient 12.7
// vs 14.0; 96 → 32: 18.1 vs 46.0, 16.9 vs 39.7, 31.5 vs 54.1.
//
// With every transform in SIMD (the gathering input kernel, the output and
// dy kernels: x8) and the GEMM's ragged panel packed once, F(4,3) wins on
// every ncsnpp-small and ncsnpp-cifar10 shape with ≥ 1024 output pixels,
// images of ≥ 49 pixels and ≥ 16 channels on one side (one thread, AVX2,
// two runs each, ms forward / input gradient / weight gradient, F(4,3) vs
// im2col): 32 → 64 at 14×14 2.7/2.9/3.3 vs 6.9/6.2/6.4; 32 → 32 at 14×14
// 1.7/1.7/1.6 vs 5.4/4.1/5.0; 32 → 32 at 7×7 0.5/0.5/0.4 vs 1.5/1.3/1.5;
// 16 → 16 at 28×28 1.8/2.0/1.8 vs 6.4/6.3/5.7; the output layers 32 → 1
// at 28×28 1.6–2.1/2.3/2.9 vs 9.8/8.7/9.8 and 128 → 3 at 32×32 (N = 4)
// 1.0/0.8/1.0 vs 5.6/5.6/5.6; 9 → 32 at 28×28 2.1/2.8/3.4 vs 4.4/5.1/4.9;
// 9 → 128 at 32×32 (N = 4) 1.1–1.7/1.2/1.2–1.7 vs 1.5/1.7/1.6–2.0. The
// exception is the weight gradient of a 3-channel input (3 → 32 at 28×28:
// 5.3–5.5 vs 1.9–2.6 ms; its forward pass and input gradient are even):
// the weight gradient needs ≥ 8 input channels. Without the x8 kernels
// (-tags noasm, the generic level) the scalar transforms keep the rule
// before this paragraph's (≥ 128 channels, or ≥ 64 on images of ≥ 49
// pixels).
func winogradFor(n, ci, co, h, w int, pass convPass) *winoAlgo {
	switch winoMode {
	case winoOff:
		return nil
	case winoForce23:
		return winoF23
	case winoForce43:
		return winoF43
	}
	c, px := min(ci, co), n*h*w
	switch {
	case px >= 1024 && (c >= 128 || c >= 64 && h*w >= 49):
		return winoF43
	case c >= 128 && px >= 256:
		return winoF43
	case winoX8() && gemm.PanelWidth()%8 == 0 && px >= 1024 && h*w >= 49 && max(ci, co) >= 16 &&
		(pass != passGradWeight || ci >= 8):
		return winoF43
	}
	return nil
}

// convPass names the three passes of a convolution for winogradFor.
type convPass int

const (
	passForward    convPass = iota
	passGradInput           // a convolution of the output's channels into the input's
	passGradWeight          // ci: the input's channels, co: the output's
)

// winograd returns the algorithm for g's forward pass, nil for im2col.
func (g convGeom) winograd() *winoAlgo {
	if g.kh != 3 || g.kw != 3 || g.stride != 1 || g.pad != 1 || g.c == 0 {
		return nil
	}
	return winogradFor(g.n, g.c, g.o, g.h, g.w, passForward)
}

// winogradGradInput returns the algorithm for g's input gradient (a
// convolution of O channels into C), nil for im2col.
func (g convGeom) winogradGradInput() *winoAlgo {
	if g.kh != 3 || g.kw != 3 || g.stride != 1 || g.pad != 1 || g.o == 0 {
		return nil
	}
	return winogradFor(g.n, g.o, g.c, g.h, g.w, passGradInput)
}

// winogradGradWeight returns the algorithm for g's weight gradient, nil for
// im2col.
func (g convGeom) winogradGradWeight() *winoAlgo {
	if g.kh != 3 || g.kw != 3 || g.stride != 1 || g.pad != 1 || g.c == 0 || g.o == 0 {
		return nil
	}
	return winogradFor(g.n, g.c, g.o, g.h, g.w, passGradWeight)
}

// winogradConv2d is cpuConv2d through alg.
func winogradConv2d(alg *winoAlgo, g convGeom, out, x, w, bias *Tensor) {
	wc := newWinoConv(alg, g.n, g.c, g.o, g.h, g.w)
	wc.src, wc.dst = x.data, out.data
	if bias != nil {
		wc.bias, wc.perSampleBias = bias.data, len(bias.data) > g.o
	}
	wc.setWeights(w, false)
	wc.run()
	wc.release()
}

// winogradConv2dGradInput is cpuConv2dGradInput through alg: dx = β·dx +
// conv(dy, w̃) with w̃ the flipped, transposed weight.
func winogradConv2dGradInput(alg *winoAlgo, g convGeom, dx, dy, w *Tensor, beta float32) {
	wc := newWinoConv(alg, g.n, g.o, g.c, g.h, g.w)
	wc.src, wc.dst, wc.beta = dy.data, dx.data, beta
	wc.setWeights(w, true)
	wc.run()
	wc.release()
}
