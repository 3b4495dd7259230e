package tensor

import (
	"holdgo/internal/gemm"
	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// Winograd weight gradient. The forward pass computes output tile t of
// channel o as Y = Aᵀ [ Σ_c U_{o,c} ⊙ V_{c,t} ] A with U = G g Gᵀ and
// V = Bᵀ d B; Y is linear in g, so its adjoint gives the weight gradient
//
//	dg_{o,c} = Gᵀ [ Σ_t Z_{o,t} ⊙ V_{c,t} ] G,   Z_{o,t} = A dY_{o,t} Aᵀ,
//
// with dY_{o,t} the m×m tile of dy (zero past the image's edge: the forward
// pass computes those outputs and drops them). For each of the α² positions
// ξ the sum over tiles is one GEMM, dU[ξ] (O × C) += Z[ξ] (O × tiles) ·
// V[ξ]ᵀ (tiles × C): F(4,3) makes 36 GEMMs of 2.25 multiplications per
// output pixel and channel pair against im2col's 9. Tiles are taken in
// chunks (bounded memory), whose GEMMs accumulate into dU; the final
// transform Gᵀ dU G runs once per call, over rows of kernels with vec.Mix
// like transformWeights. Each phase of a chunk (input transform over
// channels, Z over output channels, the GEMMs over ξ) is split over the
// worker pool, so the result does not depend on the thread count.

// winoWGradBytes bounds a chunk's V and Z buffers (α²·(C+O)·tiles floats;
// at least nr tiles). A variable for the tests, which make it small to get
// many chunks.
var winoWGradBytes = 16 << 20

// outAdj sets z = A y Aᵀ (α×α) for an m×m tile y (row-major, m² values
// used), the adjoint of the output transform.
func (alg *winoAlgo) outAdj(z *[36]float32, y *[16]float32) {
	var t [24]float32 // α×m: the 1-D adjoint down the columns
	a, m := alg.alpha, alg.m
	switch m {
	case 2:
		for k := range 2 {
			t[k], t[2+k], t[4+k], t[6+k] = at23Adj(y[k], y[2+k])
		}
		for r := range 4 {
			z[4*r], z[4*r+1], z[4*r+2], z[4*r+3] = at23Adj(t[2*r], t[2*r+1])
		}
	case 4:
		for k := range 4 {
			t[k], t[4+k], t[8+k], t[12+k], t[16+k], t[20+k] = at43Adj(y[k], y[4+k], y[8+k], y[12+k])
		}
		for r := range 6 {
			q := t[4*r : 4*r+4 : 4*r+4]
			z[a*r], z[a*r+1], z[a*r+2], z[a*r+3], z[a*r+4], z[a*r+5] = at43Adj(q[0], q[1], q[2], q[3])
		}
	}
}

// at23Adj and at43Adj are A·y for one column y of m values (Aᵀ's transpose,
// the 1-D adjoint of the output transform).
func at23Adj(y0, y1 float32) (z0, z1, z2, z3 float32) {
	return y0, y0 + y1, y0 - y1, -y1
}

func at43Adj(y0, y1, y2, y3 float32) (z0, z1, z2, z3, z4, z5 float32) {
	a, b := y0+y2, y1+y3
	c, d := y0+4*y2, 2*y1+8*y3
	return y0, a + b, a - b, c + d, c - d, y3
}

// winogradConv2dGradWeight is cpuConv2dGradWeight through alg: it adds the
// weight gradient to dw (the caller has applied β).
func winogradConv2dGradWeight(alg *winoAlgo, g convGeom, dw, x, dy *Tensor) {
	wc := newWinoConv(alg, g.n, g.c, g.o, g.h, g.w)
	wc.src, wc.vByChannel = x.data, true
	a2 := alg.alpha * alg.alpha
	cPad := (g.c + wc.nr - 1) / wc.nr * wc.nr
	per := max(wc.nr, min(wc.tiles, winoWGradBytes/(4*a2*(cPad+g.o))))
	wc.vStride = cPad*per + 16
	zStride := g.o*per + 16
	duStride := wc.uStride()
	vb, zb, dub := getScratch(a2*wc.vStride), getScratch(a2*zStride), getScratch(a2*duStride)
	v, z, du := *vb, *zb, *dub
	wc.padInput()
	defer wc.releasePadded()
	for t0 := 0; t0 < wc.tiles; t0 += per {
		t1 := min(wc.tiles, t0+per)
		nt := t1 - t0
		parallel.For(g.c, 1, func(lo, hi int) { wc.inputTransform(v, t0, t1, lo, hi) })
		parallel.For(g.o, 1, func(lo, hi int) { wc.gradOutTransform(z, zStride, dy.data, t0, t1, lo, hi) })
		beta := float32(1)
		if t0 == 0 {
			beta = 0
		}
		parallel.For(a2, 1, func(lo, hi int) {
			for xi := lo; xi < hi; xi++ {
				gemm.SgemmPackedB(false, g.o, g.c, nt, wc.nr, 1, z[xi*zStride:xi*zStride+g.o*nt], max(nt, 1),
					v[xi*wc.vStride:(xi+1)*wc.vStride], beta, du[xi*duStride:xi*duStride+g.o*g.c], g.c)
			}
		})
	}
	putScratch(vb)
	putScratch(zb)
	wc.addWeightGrad(dw.data, du, duStride)
	putScratch(dub)
}

// gradOutTransform writes Z[ξ] = (A dY Aᵀ)[ξ] for output channels [o0, o1)
// of tiles [t0, t1) of dy (N, CO, H, W) into z[ξ·zStride + o·nt + t−t0]
// (row-major CO × nt, the GEMMs' A operand).
//
// With the eight-tile kernel (F(4,3)) it runs eight consecutive tiles at a
// time, the tiles' rows read in place; a tile the image's edge crops is
// first copied, zero-padded, into a side buffer. The chunk's last tiles
// short of eight take the scalar path (the kernel stores eight lanes).
func (wc *winoConv) gradOutTransform(z []float32, zStride int, dy []float32, t0, t1, o0, o1 int) {
	m, a2 := wc.alg.m, wc.alg.alpha*wc.alg.alpha
	nt := t1 - t0
	hw, per := wc.h*wc.w, wc.th*wc.tw
	var y [16]float32
	var tz [36]float32
	x8 := wc.x8()
	var (
		rows  [32]*float32
		tmp   [192]float32
		sidep *[]float32
		side  []float32
	)
	if x8 {
		sidep = getScratch(8 * 16)
		side = (*sidep)[:8*16]
		defer putScratch(sidep)
	}
	for o := o0; o < o1; o++ {
		img, ty, tx := t0/per, t0%per/wc.tw, t0%wc.tw
		t := t0
		for ; x8 && t+8 <= t1; t += 8 {
			for l := range 8 {
				y0, x0 := ty*4, tx*4
				base := (img*wc.co+o)*hw + y0*wc.w + x0
				if y0+4 <= wc.h && x0+4 <= wc.w {
					for i := range 4 {
						rows[i*8+l] = &dy[base+i*wc.w]
					}
				} else {
					tile := side[l*16 : l*16+16]
					clear(tile)
					for r := range min(4, wc.h-y0) {
						copy(tile[r*4:r*4+min(4, wc.w-x0)], dy[base+r*wc.w:])
					}
					for i := range 4 {
						rows[i*8+l] = &tile[i*4]
					}
				}
				if tx++; tx == wc.tw {
					if tx, ty = 0, ty+1; ty == wc.th {
						ty, img = 0, img+1
					}
				}
			}
			winoGradOut43x8(z, o*nt+t-t0, zStride, &rows, &tmp)
		}
		for ; t < t1; t++ {
			y0, x0 := ty*m, tx*m
			plane := dy[(img*wc.co+o)*hw : (img*wc.co+o+1)*hw]
			rows, cols := min(m, wc.h-y0), min(m, wc.w-x0)
			switch {
			case m == 4 && rows == 4 && cols == 4: // element by element: no memmove calls
				for r := range 4 {
					src := plane[(y0+r)*wc.w+x0 : (y0+r)*wc.w+x0+4 : (y0+r)*wc.w+x0+4]
					y[4*r], y[4*r+1], y[4*r+2], y[4*r+3] = src[0], src[1], src[2], src[3]
				}
			default:
				if rows < m || cols < m {
					clear(y[:m*m])
				}
				for r := range rows {
					for i, val := range plane[(y0+r)*wc.w+x0 : (y0+r)*wc.w+x0+cols] {
						y[r*m+i] = val
					}
				}
			}
			wc.alg.outAdj(&tz, &y)
			off := o*nt + t - t0
			for _, val := range tz[:a2] {
				z[off] = val
				off += zStride
			}
			if tx++; tx == wc.tw {
				if tx, ty = 0, ty+1; ty == wc.th {
					ty, img = 0, img+1
				}
			}
		}
	}
}

// addWeightGrad adds dg = Gᵀ dU G to the OIHW gradient dw, dU's α² planes
// (CO × CI each) duStride apart. Like transformWeights it works on rows
// across blocks of kernels: Gᵀ along the rows of each transformed tile (α
// rows → 3), then down the columns (α → 3), by vec.Mix, then the nine tap
// rows are added into the kernels.
func (wc *winoConv) addWeightGrad(dw, du []float32, duStride int) {
	alpha := wc.alg.alpha
	if alpha == 6 {
		wc.addWeightGrad43(dw, du, duStride)
		return
	}
	gt := make([]float64, 0, 3*alpha) // Gᵀ row-major (3 × α), vec.Mix's coefficients
	for k := range 3 {
		for _, row := range wc.alg.g {
			gt = append(gt, row[k])
		}
	}
	n := wc.co * wc.ci
	const blk = winoWeightBlock
	parallel.For((n+blk-1)/blk, 1, func(lo, hi int) {
		bufp := getScratch((9 + 3*alpha) * blk)
		buf := *bufp
		ins, outs := make([][]float32, alpha), make([][]float32, 3)
		for b := lo; b < hi; b++ {
			e0, e1 := b*blk, min(n, (b+1)*blk)
			m := e1 - e0
			row := func(i int) []float32 { return buf[i*blk : i*blk+m] } // 3α rows tmp[r][kx], then 9 taps
			// Along the rows: tmp[r·3+kx] = Σ_j G[j][kx]·dU[r·α+j].
			for r := range alpha {
				for j := range alpha {
					off := (r*alpha+j)*duStride + e0
					ins[j] = du[off : off+m]
				}
				for kx := range 3 {
					outs[kx] = row(r*3 + kx)
				}
				vec.Mix(outs, gt, ins)
			}
			// Down the columns: tap[ky·3+kx] = Σ_r G[r][ky]·tmp[r·3+kx].
			for kx := range 3 {
				for r := range alpha {
					ins[r] = row(r*3 + kx)
				}
				for ky := range 3 {
					outs[ky] = row(3*alpha + ky*3 + kx)
				}
				vec.Mix(outs, gt, ins)
			}
			taps := buf[3*alpha*blk:]
			for i := range m {
				k := dw[(e0+i)*9 : (e0+i)*9+9]
				for t := range 9 {
					k[t] += taps[t*blk+i]
				}
			}
		}
		putScratch(bufp)
	})
}

// gt43 is Gᵀ·(x0, …, x5)ᵀ for F(4,3)'s G (g43), factored: with a = x1 + x2,
// b = x1 − x2, c = x3 + x4, d = x3 − x4, k = (x0/4 − a/6 + c/24,
// −b/6 + d/12, −a/6 + c/6 + x5). In float32, products rounded on their own
// and the sums from the left, as the assembly kernels (winoWG43) compute it.
func gt43(x0, x1, x2, x3, x4, x5 float32) (k0, k1, k2 float32) {
	a, b, c, d := x1+x2, x1-x2, x3+x4, x3-x4
	ma := float32(a * (-1.0 / 6))
	k0 = float32(float32(x0*0.25)+ma) + float32(c*(1.0/24))
	k1 = float32(b*(-1.0/6)) + float32(d*(1.0/12))
	k2 = float32(ma+float32(c*(1.0/6))) + x5
	return k0, k1, k2
}

// addWeightGrad43 is addWeightGrad for F(4,3): Gᵀ along the rows of each
// kernel's dU, then down the columns (gt43), added into dw. Runs of
// winoWLanes kernels go to the SIMD kernel (winoWG43), which also
// transposes the taps into the kernels' rows; the rest, and every kernel
// where there is none, run the scalar gt43. It replaced a vec.Mix version
// (float64, rounded once) that took 6 % of an ncsnpp-cifar10 training step.
func (wc *winoConv) addWeightGrad43(dw, du []float32, duStride int) {
	n := wc.co * wc.ci
	lanes := winoWLanes()
	const blk = winoWeightBlock
	parallel.For((n+blk-1)/blk, 1, func(lo, hi int) {
		var buf [432]float32
		e1 := min(n, hi*blk)
		for e := lo * blk; e < e1; {
			if lanes > 0 && e+lanes <= e1 {
				winoWG43(dw, 9*e, du, e, duStride, &buf)
				e += lanes
				continue
			}
			var tmp [6][3]float32
			for r := range 6 {
				x := func(j int) float32 { return du[(6*r+j)*duStride+e] }
				tmp[r][0], tmp[r][1], tmp[r][2] = gt43(x(0), x(1), x(2), x(3), x(4), x(5))
			}
			k := (*[9]float32)(dw[9*e:])
			for kx := range 3 {
				k0, k1, k2 := gt43(tmp[0][kx], tmp[1][kx], tmp[2][kx], tmp[3][kx], tmp[4][kx], tmp[5][kx])
				k[kx] += k0
				k[3+kx] += k1
				k[6+kx] += k2
			}
			e++
		}
	})
}
