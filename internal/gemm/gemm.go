// Package gemm is holdgo's single-precision matrix multiply (SGEMM) for
// row-major matrices.
//
// SgemmRef is the plain reference: a triple loop, obviously correct, used by
// the tests as the oracle. Sgemm is the fast path: B is packed into panels
// NR columns wide, the product is blocked for the caches (KC along k, MC along
// m, NC along n) and every MR×NR tile of C is computed by a register-blocked
// microkernel. The microkernel is chosen once at start-up from the CPU's
// instruction set (see ISA, SetISA and HOLDGO_ISA in isa.go):
//
//	avx512   12×32 tile, AVX-512F zmm FMAs      (kernel_amd64.s)
//	avx2      6×16 tile, AVX2 + FMA3 ymm FMAs   (kernel_amd64.s)
//	generic   2×4 tile, plain Go                (kernel_generic.go; also the
//	          only path under the noasm build tag and off amd64)
//
// The assembly kernels read A through a row and a column stride, so one
// kernel serves A in place (row-major or transposed), a packed A panel and
// PackA's panels (SgemmPackedAB). rect packs each MC×KC block of A when C is
// at least packAColumns wide (the block is swept once per B panel); narrower
// products read A in place, in one of two sweep orders (macro), and a
// row-major A too big for L2 is swept panel by panel against all of B's
// panels with longer k slices (kernel.kcRows). A last panel of fewer than MR
// rows is read from a zero-padded copy by a shorter tile (kernel.short).
// On one thread, when A is a single MC block, B is not packed ahead: each
// panel is packed just before its column sweep into one reused buffer
// (lazyB).
//
// Large products are split across holdgo/internal/parallel's persistent
// pool: run packs each KC×NC block of B once (in parallel when it is large)
// and the threads share it, each taking a few chunks of MR-row panels (or
// of NR-column panels when M is short); runPanels serves products of one
// cache block, each chunk packing its own B panels.
package gemm

import (
	"fmt"
	"sync"

	"holdgo/internal/parallel"
)

// kernel describes one microkernel and the cache blocking tuned for it.
type kernel struct {
	isa    string
	mr, nr int // register tile of C
	mc, kc int // cache blocks along m and k (mc is a multiple of mr)
	nc     int // cache block along n (a multiple of nr)
	// packedA: the kernel reads packed A panels (generic); otherwise it
	// reads A in place with element strides rs (between rows of op(A)) and
	// cs (between columns), or a packed panel with rs=1, cs=mr.
	packedA bool
	// packA(dst, trans, a, lda, i0, mc, p0, kc, mr) and packB(dst, trans,
	// b, ldb, p0, kc, j0, nc, nr) write packed panels in pack.go's layout;
	// nil means pack.go's plain-Go packers.
	packA, packB packer
	// skinny, when set, computes a skinnyRows×w tile (w ∈ 1, 2, 4, 8)
	// T[j*skinnyRows+i] = Σ_p a[p*skinnyRows+i]·b[p*w+j] over kc for
	// products with a short side (skinny.go).
	skinny func(w, kc int, a, b, t []float32)
	// micro computes the mr×nr tile C = alpha·Ã·B̃ + beta·C over kc, where Ã
	// starts at a[0] with strides rs, cs (packed: rs=1, cs=mr), B̃ is a packed
	// panel (kc rows of nr) and C has row stride ldc. beta == 0 overwrites C.
	// The slices must cover every element the tile touches.
	micro func(kc int, a []float32, rs, cs int, b, c []float32, ldc int, alpha, beta float32)
	// microPF, when set, is micro for a row-major Ã read in place (cs = 1)
	// that also walks pf into L2, one cache line per k step: the driver
	// points it at the next panel's rows (see macro).
	microPF func(kc int, a []float32, rs int, b, c []float32, ldc int, alpha, beta float32, pf []float32)
	// microRows, when set, is micro for the other tiles of a rows-first
	// sweep (see macro): Ã read in place (cs = 1) sits in L1 while the B̃
	// panels stream from L2, a new cache line of B̃ per k step, so it
	// prefetches B̃ a few k steps ahead.
	microRows func(kc int, a []float32, rs int, b, c []float32, ldc int, alpha, beta float32)
	// kcRows, when set, is the k block of a rows-first sweep of a
	// row-major A (with microRows): there only the mr×kc panel of A has to
	// stay in L1, not a kc×nr panel of B, so k can be cut in fewer, longer
	// slices and C read and written fewer times.
	kcRows int
	// short lists kernels for tiles of fewer rows, by height ascending: a
	// last panel of r < mr rows runs on the lowest one at least r high
	// instead of computing mr rows (Winograd's GEMMs have 32 or 64 rows:
	// 12.5 % of the work was padding at AVX-512, 3–12.5 % at AVX2). Each
	// reads the zero-padded full-height panel (rs = 1, cs = mr) and adds up
	// its products in the full kernel's order, so C is the same to the bit.
	short []shortKernel
}

// shortKernel is a microkernel for the first mr rows of a tile.
type shortKernel struct {
	mr    int
	micro func(kc int, a []float32, rs, cs int, b, c []float32, ldc int, alpha, beta float32)
}

// minFlopsPerThread is the work below which an extra thread costs more in
// hand-off than it saves.
const minFlopsPerThread = 1 << 21

// packAColumns is the width of C from which the assembly kernels read a
// packed block of A instead of reading A in place (a variable for tests).
var packAColumns = 256

// rowsFirstA is the size of A (elements) from which macro sweeps an in-place
// A panel by panel against all of B's column panels (4 MiB: beyond L2).
var rowsFirstA = 1 << 20

// rowsMaxB is the largest k×n block of op(B), in floats, that run packs for
// a rows-first sweep with kcRows (768 KiB, which the sweep reads from L2; at
// most kc·nc, the workspace's room).
const rowsMaxB = 3 << 16

// Sgemm computes C = alpha·op(A)·op(B) + beta·C for row-major matrices, op(A)
// m×k, op(B) k×n; op(X) = Xᵀ when transX. lda/ldb/ldc are row strides of the
// matrices as stored (A is m×k, or k×m when transA). beta == 0 means C is
// overwritten (NaNs in C ignored). When alpha == 0 or k == 0, A and B are not
// read and C = beta·C. Sgemm panics if a slice is too short for the given
// dimensions and strides, or a dimension or stride is invalid.
func Sgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	checkArgs(transA, transB, m, n, k, a, lda, b, ldb, c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	kern := activeKernel()
	g := &gemmJob{kern: kern, transA: transA, transB: transB, m: m, n: n, k: k,
		alpha: alpha, a: a, lda: lda, b: b, ldb: ldb, beta: beta, c: c, ldc: ldc}
	g.threads = min(parallel.Threads(), max(1, 2*m*n*k/minFlopsPerThread))
	if g.runSkinny() {
		return
	}
	g.run()
}

// PanelWidth is the number of columns of op(B) per packed panel for the
// kernel in use (SgemmPackedB's layout).
func PanelWidth() int { return activeKernel().nr }

// SgemmPackedB is Sgemm with op(B) given already packed: ⌈n/nr⌉ panels,
// panel p holding rows 0…k−1 of columns p·nr…p·nr+nr−1 of op(B) row by row
// (bp[(p·k+r)·nr+j] = op(B)[r][p·nr+j]; columns past n are ignored), for
// nr = PanelWidth(). A caller that builds op(B) itself (im2col) writes it in
// this layout and saves the copy Sgemm's packing makes. It panics if nr is
// not the current kernel's panel width or bp is too short.
func SgemmPackedB(transA bool, m, n, k, nr int, alpha float32, a []float32, lda int, bp []float32, beta float32, c []float32, ldc int) {
	kern := activeKernel()
	if nr != kern.nr {
		panic(fmt.Sprintf("gemm: B packed in panels of %d columns, the %s kernel takes %d (PanelWidth changed?)", nr, kern.isa, kern.nr))
	}
	panels := (n + nr - 1) / nr
	if need := panels * k * nr; len(bp) < need {
		panic(fmt.Sprintf("gemm: len(bp)=%d < %d (%d panels of %d×%d)", len(bp), need, panels, k, nr))
	}
	checkArgs(transA, false, m, n, k, a, lda, bp, max(n, 1), c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	g := &gemmJob{kern: kern, transA: transA, m: m, n: n, k: k, alpha: alpha, a: a, lda: lda,
		b: bp, beta: beta, c: c, ldc: ldc, prepacked: true}
	g.threads = min(parallel.Threads(), max(1, 2*m*n*k/minFlopsPerThread))
	g.run()
}

// PanelHeight is the number of rows of op(A) per packed panel for the kernel
// in use (PackA's layout).
func PanelHeight() int { return activeKernel().mr }

// PackedALen is the length of PackA's result for an m×k matrix and panels of
// mr rows.
func PackedALen(m, k, mr int) int { return (m + mr - 1) / mr * mr * k }

// PackA packs the m×k row-major matrix a (row stride lda) into dst as
// ⌈m/mr⌉ panels of mr rows, each k columns of mr floats (dst[(p·k+c)·mr+i] =
// a[(p·mr+i)·lda+c]), rows past m zero, for mr = PanelHeight(): the operand
// SgemmPackedAB reads. A matrix used as A many times (a frozen convolution's
// transformed weight) is packed once. It panics if mr is not the current
// kernel's panel height or dst is shorter than PackedALen(m, k, mr).
func PackA(dst []float32, m, k, mr int, a []float32, lda int) {
	kern := activeKernel()
	if mr != kern.mr {
		panic(fmt.Sprintf("gemm: A packed in panels of %d rows, the %s kernel takes %d", mr, kern.isa, kern.mr))
	}
	if need := PackedALen(m, k, mr); len(dst) < need {
		panic(fmt.Sprintf("gemm: len(dst)=%d < %d (%d×%d in panels of %d rows)", len(dst), need, m, k, mr))
	}
	if m == 0 || k == 0 {
		return
	}
	if m < 0 || k < 0 || lda < k || len(a) < (m-1)*lda+k {
		panic(fmt.Sprintf("gemm: PackA of %d×%d with lda=%d from %d floats", m, k, lda, len(a)))
	}
	kern.packA(dst, false, a, lda, 0, m, 0, k, mr)
}

// SgemmPackedAB is SgemmPackedB with A (m×k) given packed by PackA in panels
// of mr = PanelHeight() rows. The result is the same, bit for bit, as
// SgemmPackedB's on the unpacked A.
func SgemmPackedAB(m, n, k, mr, nr int, alpha float32, ap []float32, bp []float32, beta float32, c []float32, ldc int) {
	kern := activeKernel()
	if mr != kern.mr || nr != kern.nr {
		panic(fmt.Sprintf("gemm: operands packed for an %d×%d tile, the %s kernel takes %d×%d", mr, nr, kern.isa, kern.mr, kern.nr))
	}
	if need := PackedALen(m, k, mr); len(ap) < need {
		panic(fmt.Sprintf("gemm: len(ap)=%d < %d (%d×%d in panels of %d rows)", len(ap), need, m, k, mr))
	}
	if need := (n + nr - 1) / nr * k * nr; len(bp) < need {
		panic(fmt.Sprintf("gemm: len(bp)=%d < %d (%d×%d in panels of %d columns)", len(bp), need, k, n, nr))
	}
	checkArgs(false, false, m, n, k, ap, max(k, 1), bp, max(n, 1), c, ldc)
	if m == 0 || n == 0 {
		return
	}
	if alpha == 0 || k == 0 {
		scaleC(m, n, beta, c, ldc)
		return
	}
	g := &gemmJob{kern: kern, m: m, n: n, k: k, alpha: alpha, a: ap, lda: k,
		b: bp, beta: beta, c: c, ldc: ldc, prepacked: true, prepackedA: true}
	g.threads = min(parallel.Threads(), max(1, 2*m*n*k/minFlopsPerThread))
	g.run()
}

// checkArgs panics with a clear message on programmer errors.
func checkArgs(transA, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("gemm: negative dimension m=%d n=%d k=%d", m, n, k))
	}
	check := func(name string, s []float32, rows, cols, ld int) {
		if ld < max(cols, 1) {
			panic(fmt.Sprintf("gemm: ld%s=%d < %d (stored %s is %d×%d)", name, ld, max(cols, 1), name, rows, cols))
		}
		if rows == 0 || cols == 0 {
			return
		}
		if need := (rows-1)*ld + cols; len(s) < need {
			panic(fmt.Sprintf("gemm: len(%s)=%d < %d (stored %s is %d×%d, ld%s=%d)", name, len(s), need, name, rows, cols, name, ld))
		}
	}
	if transA {
		check("a", a, k, m, lda)
	} else {
		check("a", a, m, k, lda)
	}
	if transB {
		check("b", b, n, k, ldb)
	} else {
		check("b", b, k, n, ldb)
	}
	check("c", c, m, n, ldc)
}

// scaleC sets C = beta·C (C = 0 when beta == 0, NaNs included).
func scaleC(m, n int, beta float32, c []float32, ldc int) {
	for i := range m {
		row := c[i*ldc : i*ldc+n]
		switch beta {
		case 0:
			clear(row)
		case 1:
		default:
			for j := range row {
				row[j] *= beta
			}
		}
	}
}

// gemmJob is one Sgemm call.
type gemmJob struct {
	kern           *kernel
	threads        int
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	a, b, c        []float32
	lda, ldb, ldc  int
	// prepacked: b already holds op(B) as ⌈n/nr⌉ panels of k×nr (see
	// SgemmPackedB); ldb is unused.
	prepacked bool
	// prepackedA: a holds A in PackA's panels (SgemmPackedAB); lda is unused.
	prepackedA bool
}

// workspace holds one thread's packing buffers.
type workspace struct {
	a, b, tile []float32
}

var workspaces sync.Pool

// getWorkspace returns a workspace with room for kern's blocks.
func getWorkspace(kern *kernel) *workspace {
	ws, _ := workspaces.Get().(*workspace)
	if ws == nil {
		ws = new(workspace)
	}
	grow := func(s []float32, n int) []float32 {
		if cap(s) < n {
			return make([]float32, n)
		}
		return s[:n]
	}
	// Room for the blocked path's buffers and for the skinny path's (a long
	// panel in a, the short operand in b, its tile in tile).
	ws.a = grow(ws.a, max(kern.mc*kern.kc, skinnyRows*skinnyKC))
	ws.b = grow(ws.b, max(kern.kc*kern.nc, skinnyMax*skinnyKC))
	ws.tile = grow(ws.tile, max(kern.mr*kern.nr, skinnyRows*skinnyMax))
	return ws
}

// split returns the block size that cuts n into the fewest pieces of at most
// block, as even as possible, rounded up to a multiple of unit.
func split(n, block, unit int) int {
	pieces := (n + block - 1) / block
	size := (n + pieces - 1) / pieces
	return min((size+unit-1)/unit*unit, block)
}

// run walks C in blocks of nc columns and the k dimension in slices of kc.
// For each it packs the kc×nc block of op(B) once (in parallel when it is
// large), then the threads share it read-only while they split the block's
// MR-row panels (or, when M is short, its NR-column panels) between them, a
// few chunks per thread so that a thread slowed down by other work on the
// machine is picked up by the others. On one thread with a short A it
// leaves the packing to macro, panel by panel (lazyB).
func (g *gemmJob) run() {
	kern := g.kern
	if g.runPanels() {
		return
	}
	ws := getWorkspace(kern)
	defer workspaces.Put(ws)
	kcBlock := split(g.k, kern.kc, 1)
	ncBlock := split(g.n, kern.nc, kern.nr)
	if kern.kcRows > 0 && !g.transA && g.rowsFirst(g.n) && (g.n+kern.nr-1)/kern.nr*kern.nr*kern.kcRows <= rowsMaxB {
		kcBlock = split(g.k, kern.kcRows, 1)
	}
	for jc := 0; jc < g.n; jc += ncBlock {
		nc := min(ncBlock, g.n-jc)
		nPanels := (nc + kern.nr - 1) / kern.nr
		for pc := 0; pc < g.k; pc += kcBlock {
			kc := min(kcBlock, g.k-pc)
			beta := g.beta
			if pc > 0 {
				beta = 1
			}
			blk := block{b: ws.b, stride: kc * kern.nr, jc: jc, pc: pc, kc: kc, beta: beta}
			if g.prepacked {
				blk.b, blk.stride = g.b[(jc/kern.nr*g.k+pc)*kern.nr:], g.k*kern.nr
			} else if g.lazyB() {
				blk.lazy = true
			} else {
				packPanels := func(lo, hi int) {
					kern.packB(ws.b[lo*kern.nr*kc:], g.transB, g.b, g.ldb, pc, kc,
						jc+lo*kern.nr, min(hi*kern.nr, nc)-lo*kern.nr, kern.nr)
				}
				if g.threads > 1 && kc*nc >= 1<<16 {
					parallel.For(nPanels, 1, packPanels)
				} else {
					packPanels(0, nPanels)
				}
			}
			mPanels := (g.m + kern.mr - 1) / kern.mr
			switch {
			case g.threads <= 1:
				g.rect(blk, 0, g.m, jc, jc+nc)
			case mPanels >= 2*g.threads || mPanels >= nPanels:
				// Two chunks per thread, not parallel.For's four: each chunk
				// sweeps the whole packed B block (2 MiB for square 1024's
				// 512×1024), so fewer, taller chunks read it from L3 half as
				// often (two threads: 1024³ 210–217 → 224–226 GFLOP/s at
				// AVX2, 307–317 → 329–341 at AVX-512; 512³ at AVX-512
				// 279–305 → 341–354).
				parallel.For(mPanels, max(1, mPanels/(2*g.threads)), func(lo, hi int) {
					g.rect(blk, lo*kern.mr, min(hi*kern.mr, g.m), jc, jc+nc)
				})
			default:
				parallel.For(nPanels, 1, func(lo, hi int) {
					g.rect(blk, 0, g.m, jc+lo*kern.nr, jc+min(hi*kern.nr, nc))
				})
			}
		}
	}
}

// packsA reports whether rect packs blocks of op(A) for a part of C cols
// wide (otherwise the kernel reads A in place).
func (g *gemmJob) packsA(cols int) bool {
	return (g.kern.packedA || cols >= packAColumns) && !g.prepackedA
}

// rowsFirst reports whether macro sweeps A, read in place, panel by panel
// against all the column panels of a part of C cols wide.
func (g *gemmJob) rowsFirst(cols int) bool {
	return !g.packsA(cols) && !g.prepackedA && g.m*g.k >= rowsFirstA
}

// runPanels computes a product of one cache block (k ≤ kc, n ≤ nc) on
// several threads in one parallel loop over its column panels: each chunk
// packs its own panels of op(B) and multiplies them, so the threads never
// wait for each other's packing (run packs the block, waits, then computes:
// two hand-offs, 5–8 % of a 128×512 · 512×128 weight-gradient product on two
// threads). It reports false, doing nothing, for other products.
func (g *gemmJob) runPanels() bool {
	kern := g.kern
	nPanels := (g.n + kern.nr - 1) / kern.nr
	if g.threads <= 1 || g.prepacked || g.k > kern.kc || g.n > kern.nc || nPanels < 2*g.threads || g.m*g.k > panelsMaxA {
		return false
	}
	parallel.For(nPanels, 1, func(lo, hi int) {
		ws := getWorkspace(kern)
		defer workspaces.Put(ws)
		j0, j1 := lo*kern.nr, min(hi*kern.nr, g.n)
		kern.packB(ws.b, g.transB, g.b, g.ldb, 0, g.k, j0, j1-j0, kern.nr)
		g.rect(block{b: ws.b, stride: g.k * kern.nr, jc: j0, kc: g.k, beta: g.beta}, 0, g.m, j0, j1)
	})
	return true
}

// panelsMaxA is the largest op(A), in floats, that runPanels lets every
// thread read whole (256 KiB: within L2).
const panelsMaxA = 1 << 16

// block is one packed kc×nc block of op(B): columns from jc, k from pc;
// panel p (columns jc+p·nr…) starts at b[p·stride] and holds kc rows of nr.
type block struct {
	b          []float32 // from the first panel's row pc on
	stride     int       // floats from one panel to the next
	jc, pc, kc int
	beta       float32 // the beta for this k slice (1 after the first)
	// lazy: b is not packed; macro packs each column panel just before
	// its sweep into the same buffer (see lazyB).
	lazy bool
}

// rect computes rows [i0, i1) × columns [j0, j1) of C for one k slice, in
// blocks of MC rows; j0 and j1 lie in blk's columns on NR-panel boundaries.
func (g *gemmJob) rect(blk block, i0, i1, j0, j1 int) {
	kern := g.kern
	ws := getWorkspace(kern)
	defer workspaces.Put(ws)
	mcBlock := split(i1-i0, kern.mc, kern.mr)
	// The assembly kernels can read A in place, but a block of A that is
	// swept once per B panel is worth packing when there are many panels:
	// in place, the mr rows of a tile lie lda apart and, for power-of-two
	// lda, fall into the same L1 sets (square 1024 on one AVX-512 thread:
	// 66 GFLOP/s in place, 91 packed). Below 256 columns the packing costs
	// more than it saves (the MLP products, n = 128).
	packed := g.packsA(j1 - j0)
	for ic := i0; ic < i1; ic += mcBlock {
		mc := min(mcBlock, i1-ic)
		if packed {
			kern.packA(ws.a, g.transA, g.a, g.lda, ic, mc, blk.pc, blk.kc, kern.mr)
		}
		g.macro(ws, blk, ic, mc, j0, j1-j0, packed)
	}
}

// macro runs the microkernel over the mc×nc part of C at (ic, jc) for the
// k slice of blk (ws.a holds the packed A block when the kernel wants one).
func (g *gemmJob) macro(ws *workspace, blk block, ic, mc, jc, nc int, packed bool) {
	kern := g.kern
	mr, nr := kern.mr, kern.nr
	ldc := g.ldc
	pc, kc, beta := blk.pc, blk.kc, blk.beta
	// A ragged last panel of fewer than mr rows is read from a zero-padded
	// copy, made once here for all the column panels (made per panel, its
	// packing cost 5 % of an ncsnpp-small training step: Winograd's GEMMs
	// have 32 or 64 rows, not multiples of 6).
	var ragged []float32
	if r := mc % mr; !packed && !g.prepackedA && r != 0 {
		kern.packA(ws.a, g.transA, g.a, g.lda, ic+mc-r, r, pc, kc, mr)
		ragged = ws.a[:mr*kc]
	}
	// A read in place from memory (too big to stay in L2 between column
	// panels) is swept once, each mr-row panel against every column panel
	// while it sits in L1, so its loads spread over the whole block instead
	// of stalling the first column panel's sweep (B, at most packAColumns
	// wide, stays in L2). One thread, A/B on the Intel AVX-512 VM: conv
	// 8192×1152×128 93–96 → 100–102 GFLOP/s at AVX2, 32768×576×64 98–103 →
	// 106–107 at AVX-512 (74 → 75–76 at AVX2); two threads within noise.
	rowsFirst := g.rowsFirst(nc) && !blk.lazy
	// bPanel is the packed panel of op(B) for columns jc+jr….
	bPanel := func(jr int) []float32 {
		if blk.lazy {
			return ws.b[:nr*kc]
		}
		boff := (jc + jr - blk.jc) / nr * blk.stride
		return blk.b[boff : boff+nr*kc]
	}
	tile := func(jr, ir int) {
		cols := min(nr, nc-jr)
		bp := bPanel(jr)
		rows := min(mr, mc-ir)
		// Where the kernel reads this panel of op(A).
		var ap []float32
		rs, cs := 1, mr
		switch {
		case g.prepackedA: // panel (ic+ir)/mr from column pc on
			ap = g.a[(ic+ir)*g.k+pc*mr : (ic+ir+mr)*g.k]
		case packed:
			ap = ws.a[ir*kc : (ir+mr)*kc]
		case rows < mr:
			ap = ragged
		case g.transA: // op(A)[i][p] = a[p*lda+i]
			rs, cs = 1, g.lda
			ap = g.a[pc*g.lda+ic+ir:]
		default: // op(A)[i][p] = a[i*lda+p]
			rs, cs = g.lda, 1
			ap = g.a[(ic+ir)*g.lda+pc:]
		}
		coff := (ic+ir)*ldc + jc + jr
		if rows == mr && cols == nr {
			// The first column panel of a rows-first sweep fetches the
			// next panel's rows while it computes: kc cache lines,
			// contiguous from its first element, which cover the mr rows
			// when lda ≤ 16·kc/mr (part of them for a longer lda, and on
			// into the panel after for a shorter one). A/B on the Intel
			// VM: conv 32768×576×64 73–75 → 90–91 GFLOP/s at AVX2, 108–114
			// → 147–150 at AVX-512, two threads 149–151 → 182–188 and
			// 212–219 → 286–328; 8192×1152×128 at AVX2 101 → 106–108 (one
			// thread), the rest even.
			if next := (ic+ir+mr)*g.lda + pc; rowsFirst && jr == 0 && !g.transA && kern.microPF != nil && next < len(g.a) {
				kern.microPF(kc, ap, rs, bp, g.c[coff:], ldc, g.alpha, beta, g.a[next:])
				return
			}
			if rowsFirst && !g.transA && kern.microRows != nil {
				kern.microRows(kc, ap, rs, bp, g.c[coff:], ldc, g.alpha, beta)
				return
			}
			kern.micro(kc, ap, rs, cs, bp, g.c[coff:], ldc, g.alpha, beta)
			return
		}
		micro := kern.micro
		if rows < mr {
			for _, sk := range kern.short {
				if rows <= sk.mr {
					if rows == sk.mr && cols == nr {
						sk.micro(kc, ap, rs, cs, bp, g.c[coff:], ldc, g.alpha, beta)
						return
					}
					micro = sk.micro
					break
				}
			}
		}
		// Ragged edge: compute the tile aside, then merge.
		t := ws.tile
		micro(kc, ap, rs, cs, bp, t, nr, 1, 0)
		for i := range rows {
			crow := g.c[coff+i*ldc : coff+i*ldc+cols]
			trow := t[i*nr : i*nr+cols]
			if beta == 0 {
				for j, x := range trow {
					crow[j] = g.alpha * x
				}
			} else {
				for j, x := range trow {
					crow[j] = g.alpha*x + beta*crow[j]
				}
			}
		}
	}
	if rowsFirst {
		for ir := 0; ir < mc; ir += mr {
			for jr := 0; jr < nc; jr += nr {
				tile(jr, ir)
			}
		}
		return
	}
	// Where the full panels of op(A) start (panel ir/mr at a[aOff+ir·aStep])
	// and their strides, for the column sweeps' full tiles below, which
	// call the kernel directly instead of through tile: at kc = 128 a tile
	// computes for only ~0.2 µs, and tile's case analysis showed as 4 % of
	// x·Wᵀ (512×128·(128×128)ᵀ) in the profile. Interleaved A/B on the
	// Intel VM, one thread, 31 rounds, GFLOP/s: AVX2 x·Wᵀ 108.2 → 109.2,
	// dY·W 114.9 → 116.4, 256×64·64×64 96.2 → 101.5, dYᵀ·x and 512³ even;
	// AVX-512 +1–3 % on the same shapes.
	a, aOff, aStep, rs, cs := g.a, ic*g.k+pc*mr, g.k, 1, mr // prepackedA: PackA's panels
	switch {
	case g.prepackedA:
	case packed:
		a, aOff, aStep = ws.a, 0, kc
	case g.transA:
		aOff, aStep, rs, cs = pc*g.lda+ic, 1, 1, g.lda
	default:
		aOff, aStep, rs, cs = ic*g.lda+pc, g.lda, g.lda, 1
	}
	fullRows := mc / mr * mr
	for jr := 0; jr < nc; jr += nr {
		if blk.lazy {
			kern.packB(ws.b[:nr*kc], g.transB, g.b, g.ldb, pc, kc, jc+jr, min(nr, nc-jr), nr)
		}
		ir := 0
		if nc-jr >= nr {
			bp := bPanel(jr)
			for ; ir < fullRows; ir += mr {
				kern.micro(kc, a[aOff+ir*aStep:], rs, cs, bp, g.c[(ic+ir)*ldc+jc+jr:], ldc, g.alpha, beta)
			}
		}
		for ; ir < mc; ir += mr {
			tile(jr, ir)
		}
	}
}

// lazyB reports whether run leaves op(B) unpacked for macro to pack panel
// by panel. On one thread, when op(A) is a single MC block, each B panel
// serves one column sweep only, so it can be packed just before that sweep
// into the same buffer every time: the panel is still in L1 when the sweep
// starts, and the buffer's lines stay in L1 instead of a whole packed block
// being written out to L2 and read back. Interleaved A/B on the Intel VM
// (one thread, 31 rounds, GFLOP/s), AVX2: 128×512·512×128 with A
// transposed (dYᵀ·x) 102.6 → 106.0, 256³ 106.7 → 111.0, 64×512·512×512
// 90.9 → 106.5, 288×1152·1152×128 112.2 → 113.9; AVX-512: 164.6 → 169.0,
// 164.9 → 173.0, 127.0 → 164.5, 182.9 → 191.8. With two MC blocks (512³)
// the panels would be packed twice, and a taller block (mc 516) lost 3 %.
func (g *gemmJob) lazyB() bool {
	return g.threads <= 1 && g.m <= g.kern.mc && !g.rowsFirst(g.n)
}
