package gemm

import "holdgo/internal/parallel"

// Products with one short side (n ≤ 8 and m ≥ 16, or m ≤ 8 and n ≥ 16: a
// layer with 2 outputs, its weight gradient, a first layer with 7 inputs, a
// convolution with 3 output channels) waste most of a 12×32 register tile:
// n = 2 pads 2 columns to 32. They take the skinny path instead: the long
// side is packed in panels of skinnyRows rows (the vectors run along it),
// the short side in rows of w ∈ {1, 2, 4, 8} (the smallest that holds it),
// and the kernel's column-major tile is merged into C by rows (n short) or
// by columns (m short: the transposed product Cᵀ = op(B)ᵀ·op(A)ᵀ, whose
// tile columns are rows of C).

// skinnyRows is the long-side height of a skinny tile; skinnyMax the
// longest short side; skinnyKC the k block.
const (
	skinnyRows = 32
	skinnyMax  = 8
	skinnyKC   = 1024
)

// runSkinny runs the product on the skinny path when the kernel has one
// and the shape fits, and reports whether it did.
func (g *gemmJob) runSkinny() bool {
	kern := g.kern
	if kern.skinny == nil {
		return false
	}
	var (
		long, short    int // sizes of the two sides
		lo, so         []float32
		lld, sld       int
		lTrans, sTrans bool // packA's / packB's trans for the long and short operands
		transposed     bool // long side is n: tile (l, s) goes to C[s][l]
	)
	switch {
	case g.n <= skinnyMax && g.m >= 16:
		long, short = g.m, g.n
		lo, lld, lTrans = g.a, g.lda, g.transA
		so, sld, sTrans = g.b, g.ldb, g.transB
	case g.m <= skinnyMax && g.n >= 16:
		// Cᵀ = op(B)ᵀ·op(A)ᵀ: row j of op(B)ᵀ is column j of op(B).
		long, short, transposed = g.n, g.m, true
		lo, lld, lTrans = g.b, g.ldb, !g.transB
		so, sld, sTrans = g.a, g.lda, !g.transA
	default:
		return false
	}
	w := 1
	for w < short {
		w *= 2
	}
	ws := getWorkspace(kern)
	defer workspaces.Put(ws)
	panels := (long + skinnyRows - 1) / skinnyRows
	for pc := 0; pc < g.k; pc += skinnyKC {
		kc := min(skinnyKC, g.k-pc)
		sp := ws.b[:w*kc]
		packB(sp, sTrans, so, sld, pc, kc, 0, short, w)
		beta := g.beta
		if pc > 0 {
			beta = 1
		}
		body := func(p0, p1 int) {
			tws := getWorkspace(kern)
			defer workspaces.Put(tws)
			lp, tile := tws.a[:skinnyRows*kc], tws.tile[:skinnyRows*w]
			for p := p0; p < p1; p++ {
				l0 := p * skinnyRows
				rows := min(skinnyRows, long-l0)
				kern.packA(lp, lTrans, lo, lld, l0, rows, pc, kc, skinnyRows)
				kern.skinny(w, kc, lp, sp, tile)
				g.mergeSkinny(tile, l0, rows, short, transposed, beta)
			}
		}
		if g.threads > 1 {
			parallel.For(panels, 1, body)
		} else {
			body(0, panels)
		}
	}
	return true
}

// mergeSkinny writes C = alpha·T + beta·C for a skinny tile T (T[j*32+i],
// i < rows along the long side from l0, j < short): C[l0+i][j], or
// C[j][l0+i] when transposed. beta == 0 overwrites (NaNs in C ignored).
func (g *gemmJob) mergeSkinny(tile []float32, l0, rows, short int, transposed bool, beta float32) {
	alpha, c, ldc := g.alpha, g.c, g.ldc
	for j := range short {
		col := tile[j*skinnyRows : j*skinnyRows+rows]
		if transposed {
			row := c[j*ldc+l0 : j*ldc+l0+rows]
			if beta == 0 {
				for i, t := range col {
					row[i] = alpha * t
				}
			} else {
				for i, t := range col {
					row[i] = alpha*t + beta*row[i]
				}
			}
			continue
		}
		for i, t := range col {
			e := &c[(l0+i)*ldc+j]
			if beta == 0 {
				*e = alpha * t
			} else {
				*e = alpha*t + beta**e
			}
		}
	}
}
