package gemm

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"holdgo/internal/parallel"
)

// operand is a stored matrix inside a larger slice: it starts at off, has
// row stride ld, and every element outside it (the offset, the row padding,
// the tail) holds a sentinel, so a kernel reading outside the matrix turns
// the result into NaN and one writing outside it is caught by checkUntouched.
type operand struct {
	data            []float32
	off, rows, cols int
	ld              int
	sentinel        float32
	view            []float32 // data[off:], what Sgemm gets
}

func newOperand(rng *rand.Rand, rows, cols, pad, off int, sentinel float32) *operand {
	ld := max(cols, 1) + pad
	n := off + max(rows-1, 0)*ld + cols + 3 // a short tail after the matrix
	if rows == 0 || cols == 0 {
		n = off + 3
	}
	o := &operand{data: make([]float32, n), off: off, rows: rows, cols: cols, ld: ld, sentinel: sentinel}
	for i := range o.data {
		o.data[i] = sentinel
	}
	for i := range rows {
		for j := range cols {
			o.data[off+i*ld+j] = float32(rng.NormFloat64())
		}
	}
	o.view = o.data[off:]
	return o
}

// inside reports whether data index x is an element of the matrix.
func (o *operand) inside(x int) bool {
	x -= o.off
	return x >= 0 && x < o.rows*o.ld && x%o.ld < o.cols
}

type testCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	pad, off       int // row padding and slice offset of every operand
	nanC           bool
	packedB        bool // call SgemmPackedB with op(B) packed by the test
	packedAB       bool // call SgemmPackedAB with op(A) and op(B) packed by the test
}

func (tc testCase) String() string {
	return fmt.Sprintf("tA=%v tB=%v m=%d n=%d k=%d α=%g β=%g pad=%d off=%d nanC=%v",
		tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, tc.beta, tc.pad, tc.off, tc.nanC)
}

// prepared holds a case's operands and the reference result.
type prepared struct {
	tc      testCase
	a, b, c *operand
	want    []float32 // reference C (whole data slice)
	scale   []float32 // per C entry: |alpha|·Σ|a||b| + |beta|·|c|
}

func prepare(rng *rand.Rand, tc testCase) *prepared {
	nan := float32(math.NaN())
	ar, ac := tc.m, tc.k
	if tc.transA {
		ar, ac = ac, ar
	}
	br, bc := tc.k, tc.n
	if tc.transB {
		br, bc = bc, br
	}
	p := &prepared{tc: tc,
		a: newOperand(rng, ar, ac, tc.pad, tc.off, nan),
		b: newOperand(rng, br, bc, tc.pad, tc.off, nan),
		c: newOperand(rng, tc.m, tc.n, tc.pad, tc.off, 12345),
	}
	if tc.nanC {
		for i := range tc.m {
			for j := range tc.n {
				p.c.view[i*p.c.ld+j] = nan
			}
		}
	}
	p.want = append([]float32(nil), p.c.data...)
	SgemmRef(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, p.a.view, p.a.ld, p.b.view, p.b.ld,
		tc.beta, p.want[tc.off:], p.c.ld)
	// The error of a float32 dot product of length k is bounded by about
	// k·ε·Σ|a||b|; compare relative to that sum, entry by entry.
	p.scale = make([]float32, len(p.c.data))
	for i := range tc.m {
		for j := range tc.n {
			var s float64
			for q := range tc.k {
				var av, bv float32
				if tc.transA {
					av = p.a.view[q*p.a.ld+i]
				} else {
					av = p.a.view[i*p.a.ld+q]
				}
				if tc.transB {
					bv = p.b.view[j*p.b.ld+q]
				} else {
					bv = p.b.view[q*p.b.ld+j]
				}
				s += math.Abs(float64(av) * float64(bv))
			}
			s *= math.Abs(float64(tc.alpha))
			if tc.beta != 0 {
				s += math.Abs(float64(tc.beta) * float64(p.c.view[i*p.c.ld+j]))
			}
			p.scale[tc.off+i*p.c.ld+j] = float32(s)
		}
	}
	return p
}

// check runs Sgemm on a fresh copy of C and compares with the reference.
// packB lays op(B) out as SgemmPackedB wants it: panels of k rows of nr
// columns, the columns past n filled with NaN (they must be ignored).
func (p *prepared) packB(nr int) []float32 {
	tc := p.tc
	panels := (tc.n + nr - 1) / nr
	out := make([]float32, panels*tc.k*nr)
	for q := range panels {
		for r := range tc.k {
			for j := range nr {
				col, v := q*nr+j, float32(math.NaN())
				if col < tc.n {
					if tc.transB {
						v = p.b.view[col*p.b.ld+r]
					} else {
						v = p.b.view[r*p.b.ld+col]
					}
				}
				out[(q*tc.k+r)*nr+j] = v
			}
		}
	}
	return out
}

// packA lays op(A) out as SgemmPackedAB wants it: panels of mr rows, k
// columns of mr floats, the rows past m zero.
func (p *prepared) packA(mr int) []float32 {
	tc := p.tc
	out := make([]float32, PackedALen(tc.m, tc.k, mr))
	for i := range tc.m {
		for c := range tc.k {
			var v float32
			if tc.transA {
				v = p.a.view[c*p.a.ld+i]
			} else {
				v = p.a.view[i*p.a.ld+c]
			}
			out[(i/mr*tc.k+c)*mr+i%mr] = v
		}
	}
	return out
}

func (p *prepared) check(t *testing.T) {
	t.Helper()
	tc := p.tc
	got := append([]float32(nil), p.c.data...)
	if tc.packedAB {
		ap := p.packA(PanelHeight())
		if !tc.transA { // PackA gives the same panels
			mine := make([]float32, len(ap))
			for i := range mine {
				mine[i] = float32(math.NaN())
			}
			PackA(mine, tc.m, tc.k, PanelHeight(), p.a.view, p.a.ld)
			for i := range ap {
				if math.Float32bits(mine[i]) != math.Float32bits(ap[i]) {
					t.Fatalf("%v [%s]: PackA element %d = %g, want %g", tc, ISA(), i, mine[i], ap[i])
				}
			}
		}
		SgemmPackedAB(tc.m, tc.n, tc.k, PanelHeight(), PanelWidth(), tc.alpha, ap, p.packB(PanelWidth()),
			tc.beta, got[tc.off:], p.c.ld)
		// The same bits as SgemmPackedB on the unpacked A.
		want := append([]float32(nil), p.c.data...)
		SgemmPackedB(tc.transA, tc.m, tc.n, tc.k, PanelWidth(), tc.alpha, p.a.view, p.a.ld, p.packB(PanelWidth()),
			tc.beta, want[tc.off:], p.c.ld)
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(math.IsNaN(float64(got[i])) && math.IsNaN(float64(want[i]))) {
				t.Fatalf("%v [%s threads=%d]: SgemmPackedAB element %d = %g, SgemmPackedB %g", tc, ISA(), parallel.Threads(), i, got[i], want[i])
			}
		}
	} else if tc.packedB {
		SgemmPackedB(tc.transA, tc.m, tc.n, tc.k, PanelWidth(), tc.alpha, p.a.view, p.a.ld, p.packB(PanelWidth()),
			tc.beta, got[tc.off:], p.c.ld)
	} else {
		Sgemm(tc.transA, tc.transB, tc.m, tc.n, tc.k, tc.alpha, p.a.view, p.a.ld, p.b.view, p.b.ld,
			tc.beta, got[tc.off:], p.c.ld)
	}
	tol := 2 * float64(tc.k+2) * 0x1p-23
	bad := 0
	for x := range got {
		if !p.c.inside(x) {
			if got[x] != p.c.data[x] {
				t.Errorf("%v [%s]: wrote outside C at data[%d]: %g", tc, ISA(), x, got[x])
				return
			}
			continue
		}
		g, w := float64(got[x]), float64(p.want[x])
		ok := g == w || math.IsNaN(g) && math.IsNaN(w)
		if !ok && !math.IsNaN(g) && !math.IsNaN(w) && !math.IsInf(g, 0) && !math.IsInf(w, 0) {
			ok = math.Abs(g-w) <= tol*float64(p.scale[x])+1e-30
		}
		if !ok {
			if bad++; bad <= 3 {
				i, j := (x-tc.off)/p.c.ld, (x-tc.off)%p.c.ld
				t.Errorf("%v [%s threads=%d]: C[%d][%d] = %g, want %g (scale %g)",
					tc, ISA(), parallel.Threads(), i, j, g, w, p.scale[x])
			}
		}
	}
}

// forEachISA runs f once per instruction-set level the machine supports.
func forEachISA(t *testing.T, f func(t *testing.T)) {
	for _, level := range Levels() {
		prev, err := SetISA(level)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(level, f)
		SetISA(prev)
	}
}

var transCombos = [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}}

// TestSmallExhaustive covers every m, n in 0…70 with every transpose combo,
// cycling k, alpha, beta, padding and offsets through awkward values.
func TestSmallExhaustive(t *testing.T) {
	ks := []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33, 64, 70}
	scalars := []float32{1, 0.5, -2, 0}
	step := 1
	if testing.Short() {
		step = 3
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var cases []*prepared
	i := 0
	for m := 0; m <= 70; m += step {
		for n := 0; n <= 70; n += step {
			for _, tr := range transCombos {
				i++
				cases = append(cases, prepare(rng, testCase{
					transA: tr[0], transB: tr[1], m: m, n: n, k: ks[i%len(ks)],
					alpha: scalars[i%3], beta: scalars[(i/3)%4],
					pad: []int{0, 1, 5}[i%3], off: []int{0, 1, 3}[(i/5)%3], nanC: i%7 == 0,
				}))
			}
		}
	}
	forEachISA(t, func(t *testing.T) {
		for _, p := range cases {
			p.check(t)
			if t.Failed() {
				return
			}
		}
	})
}

// TestScalars covers every alpha × beta pair, beta = 0 with NaN-filled C,
// and that alpha = 0 reads neither A nor B.
func TestScalars(t *testing.T) {
	scalars := []float32{0, 1, 0.5, -2}
	rng := rand.New(rand.NewPCG(3, 4))
	var cases []*prepared
	for _, size := range [][3]int{{5, 7, 3}, {17, 33, 31}, {33, 65, 17}, {13, 40, 300}} {
		for _, tr := range transCombos {
			for _, alpha := range scalars {
				for _, beta := range scalars {
					for _, nanC := range []bool{false, true} {
						if nanC && beta != 0 {
							continue
						}
						cases = append(cases, prepare(rng, testCase{transA: tr[0], transB: tr[1],
							m: size[0], n: size[1], k: size[2], alpha: alpha, beta: beta, pad: 2, off: 1, nanC: nanC}))
					}
				}
			}
		}
	}
	forEachISA(t, func(t *testing.T) {
		for _, p := range cases {
			p.check(t)
		}
	})
	// alpha = 0: A and B full of NaN must not matter.
	nan := float32(math.NaN())
	a := []float32{nan, nan, nan, nan}
	c := []float32{1, 2, 3, 4}
	Sgemm(false, false, 2, 2, 2, 0, a, 2, a, 2, 0.5, c, 2)
	if c[0] != 0.5 || c[3] != 2 {
		t.Errorf("alpha=0: C = %v, want [0.5 1 1.5 2]", c)
	}
}

// TestLarge covers awkward larger sizes on one and two threads, so that
// the thread split over M and over N and the cache blocks are exercised.
func TestLarge(t *testing.T) {
	sizes := []int{1, 3, 17, 31, 33, 65, 127, 129, 300}
	if testing.Short() {
		sizes = []int{1, 17, 65, 129, 300}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	var cases []*prepared
	i := 0
	for _, m := range sizes {
		for _, n := range sizes {
			i++
			tr := transCombos[i%4]
			k := sizes[(i*5)%len(sizes)]
			cases = append(cases, prepare(rng, testCase{transA: tr[0], transB: tr[1], m: m, n: n, k: k,
				alpha: []float32{1, -2, 0.5}[i%3], beta: []float32{0, 1, 0.5, -2}[i%4],
				pad: []int{0, 3}[i%2], off: i % 2, nanC: i%4 == 0}))
		}
	}
	// Every transpose combo on shapes long in M, long in N (split over N
	// between threads), deep in K, and big enough to pack B in parallel.
	for _, size := range [][3]int{{600, 40, 70}, {40, 700, 70}, {64, 64, 600}, {13, 900, 200}, {3, 900, 800}, {80, 300, 300}} {
		for _, tr := range transCombos {
			i++
			cases = append(cases, prepare(rng, testCase{transA: tr[0], transB: tr[1],
				m: size[0], n: size[1], k: size[2], alpha: 1, beta: 0.5, pad: 1, off: 1}))
		}
	}
	checkEverywhere(t, cases)
}

// TestTinyBlocks shrinks every kernel's cache blocks so that medium sizes
// cross many MC, KC and NC boundaries, with A read in place (in both sweep
// orders, rowsFirstA) and packed.
func TestTinyBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var cases []*prepared
	i := 0
	for _, size := range [][3]int{{37, 70, 45}, {70, 37, 19}, {100, 100, 33}, {25, 9, 64}} {
		for _, tr := range transCombos {
			i++
			cases = append(cases, prepare(rng, testCase{transA: tr[0], transB: tr[1],
				m: size[0], n: size[1], k: size[2], alpha: -2, beta: []float32{0, 0.5}[i%2],
				pad: 1, off: 1, nanC: i%2 == 0}))
		}
	}
	prevThreads := parallel.Threads()
	defer parallel.SetThreads(prevThreads)
	for i, kern := range kernels {
		tiny := *kern
		tiny.mc, tiny.kc, tiny.nc = 2*kern.mr, 8, 2*kern.nr
		if kern.kcRows > 0 {
			tiny.kcRows = 15 // rows-first k slices of 15 (a tail of 3 after the four-step loop) or 16
		}
		kernels[i] = &tiny
		prev, _ := SetISA(kern.isa)
		t.Run(kern.isa, func(t *testing.T) {
			prevColumns, prevRowsFirst := packAColumns, rowsFirstA
			defer func() { packAColumns, rowsFirstA = prevColumns, prevRowsFirst }()
			for _, columns := range []int{1, 1 << 30} {
				packAColumns = columns
				for _, rowsFirst := range []int{0, 1 << 30} {
					rowsFirstA = rowsFirst
					for _, threads := range []int{1, 2} {
						parallel.SetThreads(threads)
						for _, p := range cases {
							p.check(t)
						}
					}
				}
			}
		})
		kernels[i] = kern
		SetISA(prev)
	}
}

func TestPanics(t *testing.T) {
	a := make([]float32, 12)
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"short a", func() { Sgemm(false, false, 4, 3, 4, 1, a[:15-4], 4, a, 3, 0, a, 3) }, "len(a)"},
		{"short b trans", func() { Sgemm(false, true, 3, 4, 3, 1, a, 3, a[:11], 3, 0, a, 4) }, "len(b)"},
		{"short c", func() { Sgemm(false, false, 3, 4, 1, 1, a, 1, a, 4, 0, a[:11], 4) }, "len(c)"},
		{"small ldc", func() { Sgemm(false, false, 2, 4, 1, 1, a, 1, a, 4, 0, a, 3) }, "ldc=3"},
		{"negative", func() { Sgemm(false, false, -1, 4, 1, 1, a, 1, a, 4, 0, a, 4) }, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg, _ := r.(string); !strings.Contains(msg, tc.want) {
					t.Errorf("panic %v, want one mentioning %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

func TestSetISA(t *testing.T) {
	levels := Levels()
	if levels[len(levels)-1] != Generic {
		t.Fatalf("Levels() = %v, want generic last", levels)
	}
	t.Logf("levels %v, active %s", levels, ISA())
	if _, err := SetISA("sse9"); err == nil {
		t.Error(`SetISA("sse9") succeeded`)
	}
	prev, err := SetISA(Generic)
	if err != nil || ISA() != Generic {
		t.Fatalf("SetISA(generic) = %v, ISA() = %s", err, ISA())
	}
	SetISA(prev)
}

// TestSkinny covers the skinny path (one side ≤ 8, the other ≥ 16) and its
// neighbours: every short size 1…9 on either side, every transpose combo,
// k across the skinnyKC block boundary (the second block accumulates), a
// long side with a ragged last panel, NaNs in C with beta 0, on one and two
// threads.
func TestSkinny(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var cases []*prepared
	i := 0
	for short := 1; short <= 9; short++ {
		for _, size := range [][2]int{{16, 3}, {77, 130}, {300, 1500}} {
			long, k := size[0], size[1]
			if testing.Short() && k > 1000 && short%3 != 0 {
				continue
			}
			for _, tr := range transCombos {
				i++
				m, n := long, short
				if i%2 == 0 {
					m, n = short, long
				}
				cases = append(cases, prepare(rng, testCase{transA: tr[0], transB: tr[1], m: m, n: n, k: k,
					alpha: []float32{1, -2, 0.5}[i%3], beta: []float32{0, 1, 0.5, -2}[i%4],
					pad: i % 3, off: i % 2, nanC: i%4 == 0}))
			}
		}
	}
	checkEverywhere(t, cases)
}

// checkEverywhere checks every case on every ISA level, on one and two
// threads.
func checkEverywhere(t *testing.T, cases []*prepared) {
	prevThreads := parallel.Threads()
	defer parallel.SetThreads(prevThreads)
	forEachISA(t, func(t *testing.T) {
		for _, threads := range []int{1, 2} {
			parallel.SetThreads(threads)
			for _, p := range cases {
				p.check(t)
			}
		}
	})
}

// TestPackedB: SgemmPackedB (op(B) packed by the caller, as im2col does)
// against the reference on ragged panels, k across the KC block, both
// layouts of A, every level and thread count.
func TestPackedB(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	var cases []*prepared
	i := 0
	for _, size := range [][3]int{{1, 1, 1}, {13, 33, 7}, {40, 700, 70}, {128, 300, 1200}, {300, 65, 600}, {5, 1030, 27}} {
		for _, tr := range transCombos {
			i++
			cases = append(cases, prepare(rng, testCase{transA: tr[0], transB: tr[1], m: size[0], n: size[1], k: size[2],
				alpha: []float32{1, -2, 0.5}[i%3], beta: []float32{0, 1, 0.5, -2}[i%4], pad: i % 3, off: i % 2,
				nanC: i%4 == 0, packedB: true}))
		}
	}
	checkEverywhere(t, cases)
}

// TestPackedAB: SgemmPackedAB (both operands packed by the caller, as a
// frozen convolution's transformed weight is) against the reference and,
// bit for bit, against SgemmPackedB; PackA against the test's own packing.
// Ragged row and column panels, k across the KC block, every level and
// thread count.
func TestPackedAB(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	var cases []*prepared
	i := 0
	for _, size := range [][3]int{{1, 1, 1}, {13, 33, 7}, {40, 700, 70}, {128, 300, 1200}, {300, 65, 600}, {25, 64, 256}} {
		for _, transA := range []bool{false, true} {
			i++
			cases = append(cases, prepare(rng, testCase{transA: transA, m: size[0], n: size[1], k: size[2],
				alpha: []float32{1, -2, 0.5}[i%3], beta: []float32{0, 1, 0.5, -2}[i%4], pad: i % 3, off: i % 2,
				nanC: i%4 == 0, packedAB: true}))
		}
	}
	checkEverywhere(t, cases)
}
