package tensor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"holdgo/internal/gemm"
	"holdgo/internal/isa"
)

// matMul64 returns a·b for row-major [][]float64.
func matMul64(a, b [][]float64) [][]float64 {
	out := make([][]float64, len(a))
	for i := range a {
		out[i] = make([]float64, len(b[0]))
		for j := range b[0] {
			for k := range b {
				out[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return out
}

func transpose64(a [][]float64) [][]float64 {
	out := make([][]float64, len(a[0]))
	for j := range out {
		out[j] = make([]float64, len(a))
		for i := range a {
			out[j][i] = a[i][j]
		}
	}
	return out
}

func randMat(r *rand.Rand, rows, cols int) [][]float64 {
	out := make([][]float64, rows)
	for i := range out {
		out[i] = make([]float64, cols)
		for j := range out[i] {
			out[i][j] = float64(float32(r.NormFloat64()))
		}
	}
	return out
}

// The matrices of each algorithm compute the m×m correlation of an α×α patch
// with a 3×3 kernel (in float64, against the direct sum): this checks the
// matrices as written against the paper.
func TestWinogradMatricesCorrelate(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, alg := range []*winoAlgo{winoF23, winoF43} {
		d, g := randMat(r, alg.alpha, alg.alpha), randMat(r, 3, 3)
		u := matMul64(matMul64(alg.g, g), transpose64(alg.g))
		v := matMul64(matMul64(alg.bt, d), transpose64(alg.bt))
		for i := range u {
			for j := range u[i] {
				u[i][j] *= v[i][j]
			}
		}
		y := matMul64(matMul64(alg.at, u), transpose64(alg.at))
		for i := range alg.m {
			for j := range alg.m {
				var want float64
				for ky := range 3 {
					for kx := range 3 {
						want += d[i+ky][j+kx] * g[ky][kx]
					}
				}
				if !(math.Abs(y[i][j]-want) <= 1e-12*(1+math.Abs(want))) {
					t.Errorf("%s: y[%d][%d] = %v, direct %v", alg.name, i, j, y[i][j], want)
				}
			}
		}
	}
}

// The hand-written transforms equal the matrix products Bᵀ d B, Aᵀ s A and
// G k Gᵀ of the algorithm's matrices.
func TestWinogradTransformsMatchMatrices(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(name string, got []float32, want [][]float64) {
		t.Helper()
		for i := range want {
			for j := range want[i] {
				g, w := float64(got[i*len(want[i])+j]), want[i][j]
				if !(math.Abs(g-w) <= 1e-5*(1+math.Abs(w))) {
					t.Errorf("%s[%d][%d] = %v, matrices give %v", name, i, j, g, w)
				}
			}
		}
	}
	flat := func(a [][]float64) []float32 {
		var out []float32
		for _, row := range a {
			for _, v := range row {
				out = append(out, float32(v))
			}
		}
		return out
	}
	for _, alg := range []*winoAlgo{winoF23, winoF43} {
		for range 5 {
			d, s, k := randMat(r, alg.alpha, alg.alpha), randMat(r, alg.alpha, alg.alpha), randMat(r, 3, 3)
			var d36, s36, v, u [36]float32
			var k9 [9]float32
			var y [16]float32
			copy(d36[:], flat(d))
			copy(s36[:], flat(s))
			copy(k9[:], flat(k))
			alg.inTransform(&v, &d36)
			check(alg.name+" BᵀdB", v[:], matMul64(matMul64(alg.bt, d), transpose64(alg.bt)))
			// The output transform of one tile of one channel.
			oc := newWinoConv(alg, 1, 1, 1, alg.m, alg.m)
			oc.dst = y[:alg.m*alg.m]
			mbuf := make([]float32, alg.alpha*alg.alpha*oc.mStride)
			for xi, val := range s36[:alg.alpha*alg.alpha] {
				mbuf[xi*oc.mStride] = val
			}
			oc.outputTransform(mbuf, 0, 1, 0, 1)
			check(alg.name+" AᵀsA", y[:alg.m*alg.m], matMul64(matMul64(alg.at, s), transpose64(alg.at)))
			// The weight gradient's transform of an output-gradient tile,
			// A y Aᵀ (the adjoint of the output transform).
			ym := randMat(r, alg.m, alg.m)
			var y16 [16]float32
			copy(y16[:], flat(ym))
			var z [36]float32
			alg.outAdj(&z, &y16)
			check(alg.name+" AyAᵀ", z[:alg.alpha*alg.alpha], matMul64(matMul64(transpose64(alg.at), ym), alg.at))
			// The weight transform of one 1×1-channel kernel, plain and flipped.
			for _, flip := range []bool{false, true} {
				wc := newWinoConv(alg, 1, 1, 1, 4, 4)
				mr := gemm.PanelHeight()
				up := make([]float32, alg.alpha*alg.alpha*wc.packedStride(mr))
				wc.transformWeights(up, k9[:], flip, mr)
				for xi := range alg.alpha * alg.alpha {
					u[xi] = up[xi*wc.packedStride(mr)]
				}
				kk := k
				if flip {
					kk = [][]float64{
						{k[2][2], k[2][1], k[2][0]}, {k[1][2], k[1][1], k[1][0]}, {k[0][2], k[0][1], k[0][0]},
					}
				}
				check(fmt.Sprintf("%s GkGᵀ flip=%v", alg.name, flip), u[:alg.alpha*alg.alpha], matMul64(matMul64(alg.g, kk), transpose64(alg.g)))
			}
		}
	}
}

// The selection rule picks F(4,3) on the NCSN++ shapes where it was measured
// faster (BenchmarkConv3x3; see winogradFor) and im2col elsewhere, with the
// SIMD transforms (x8) and without them.
func TestWinogradRule(t *testing.T) {
	const fw, dx, dw = passForward, passGradInput, passGradWeight
	F := winoF43
	for _, c := range []struct {
		n, ci, co, h int
		pass         convPass
		simd, scalar *winoAlgo
	}{
		{4, 128, 128, 32, fw, F, F}, {4, 128, 128, 32, dx, F, F}, {4, 256, 256, 16, dw, F, F}, {4, 128, 256, 16, dx, F, F},
		{32, 64, 64, 14, fw, F, F}, {32, 64, 64, 7, dx, F, F},
		{4, 256, 256, 8, fw, F, F}, {4, 256, 256, 8, dw, F, F}, {4, 256, 256, 8, dx, F, F}, {4, 512, 256, 8, dw, F, F},
		{3, 256, 256, 8, fw, nil, nil}, {4, 256, 256, 4, fw, nil, nil}, {4, 256, 256, 4, dw, nil, nil},
		{64, 64, 64, 4, fw, nil, nil}, {1, 64, 64, 14, dx, nil, nil}, {4, 64, 256, 8, fw, nil, nil},
		{32, 32, 32, 28, fw, F, nil}, {32, 96, 32, 28, dw, F, nil}, {32, 32, 64, 14, dw, F, nil}, {32, 32, 32, 7, dx, F, nil},
		{32, 16, 16, 28, dw, F, nil}, {32, 8, 8, 28, fw, nil, nil}, {16, 32, 32, 7, fw, nil, nil},
		{32, 3, 32, 28, fw, F, nil}, {32, 32, 3, 28, dx, F, nil}, {32, 3, 32, 28, dw, nil, nil}, {32, 8, 32, 28, dw, F, nil},
		{32, 32, 1, 28, fw, F, nil}, {32, 1, 32, 28, dx, F, nil}, {32, 32, 1, 28, dw, F, nil},
		{4, 9, 128, 32, fw, F, nil}, {4, 128, 9, 32, dx, F, nil}, {4, 9, 128, 32, dw, F, nil},
	} {
		for _, level := range isa.Levels() {
			prev, _ := isa.Set(level)
			want := c.scalar
			if level == isa.AVX2 || level == isa.AVX512 {
				want = c.simd
			}
			if got := winogradFor(c.n, c.ci, c.co, c.h, c.h, c.pass); got != want {
				t.Errorf("%s: winogradFor(%d, %d→%d, %d×%d, pass %d) = %v, want %v", level, c.n, c.ci, c.co, c.h, c.h, c.pass, got, want)
			}
			isa.Set(prev)
		}
	}
}

// The eight-patch SIMD input transform equals the scalar one bit for bit
// (the same operations in the same order, no fused multiply-add), patch by
// patch, with the results at the stride asked for.
func TestWinogradIn43x8(t *testing.T) {
	if !winoX8() {
		t.Skip("no eight-patch kernel at this instruction-set level")
	}
	r := rand.New(rand.NewPCG(5, 6))
	const stride = 13
	for range 20 {
		var buf [288]float32
		var d [8][36]float32
		for l := range 8 {
			for k := range 36 {
				x := float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
				d[l][k], buf[k*8+l] = x, x
			}
		}
		v := make([]float32, 3+35*stride+8+5)
		winoIn43x8(v, 3, stride, &buf)
		for l := range 8 {
			var want [36]float32
			winoF43.inTransform(&want, &d[l])
			for xi := range 36 {
				if got := v[3+xi*stride+l]; math.Float32bits(got) != math.Float32bits(want[xi]) {
					t.Fatalf("patch %d, ξ=%d: %v, scalar transform %v", l, xi, got, want[xi])
				}
			}
		}
	}
}

// TestWinogradIn43x8G checks the gathering kernel bit for bit against the
// scalar transform of each patch, for patches anywhere in a source (rows wp
// apart, some overlapping, one ending eight floats before the source's end).
func TestWinogradIn43x8G(t *testing.T) {
	if !winoX8() {
		t.Skip("no eight-patch kernel at this instruction-set level")
	}
	r := rand.New(rand.NewPCG(7, 8))
	const stride, wp = 11, 17
	src := make([]float32, 40*wp)
	for i := range src {
		src[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(7)-3)))
	}
	for range 50 {
		var offs [8]int
		for l := range offs {
			offs[l] = r.IntN(len(src) - 5*wp - 8 + 1)
		}
		offs[r.IntN(8)] = len(src) - 5*wp - 8
		var buf [288]float32
		v := make([]float32, 2+35*stride+8+3)
		winoIn43x8G(v, 2, stride, src, &offs, wp, &buf)
		for l, o := range offs {
			var d, want [36]float32
			for i := range 6 {
				copy(d[6*i:6*i+6], src[o+i*wp:])
			}
			winoF43.inTransform(&want, &d)
			for xi := range 36 {
				if got := v[2+xi*stride+l]; math.Float32bits(got) != math.Float32bits(want[xi]) {
					t.Fatalf("patch %d at %d, ξ=%d: %v, scalar transform %v", l, o, xi, got, want[xi])
				}
			}
		}
	}
	offs := [8]int{0, 0, 0, 0, 0, 0, 0, len(src) - 5*wp - 7}
	var buf [288]float32
	defer func() {
		if recover() == nil {
			t.Error("a patch read past the source did not panic")
		}
	}()
	winoIn43x8G(make([]float32, 36*stride), 0, stride, src, &offs, wp, &buf)
}

// The F(4,3) weight transform of a whole weight (ragged panels, the SIMD
// kernels' runs and the scalar tail) equals G k Gᵀ computed in float64, and
// gives the same bits at every instruction-set level, plain and flipped.
func TestWinogradWeightTransform43(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const co, ci = 21, 5
	w := make([]float32, co*ci*9)
	for i := range w {
		w[i] = float32(r.NormFloat64())
	}
	g := winoF43.g
	for _, flip := range []bool{false, true} {
		var first []float32 // U[ξ][o][c] at the first level
		for _, level := range isa.Levels() {
			prev, err := isa.Set(level)
			if err != nil {
				t.Fatal(err)
			}
			oc, ic := co, ci // U[ξ] is oc × ic
			if flip {
				oc, ic = ci, co
			}
			wc := newWinoConv(winoF43, 1, ic, oc, 8, 8)
			mr := gemm.PanelHeight()
			stride := wc.packedStride(mr)
			up := make([]float32, 36*stride)
			wc.transformWeights(up, w, flip, mr)
			isa.Set(prev)
			got := make([]float32, 0, 36*oc*ic)
			for xi := range 36 {
				for o := range oc {
					for c := range ic {
						got = append(got, up[xi*stride+(o/mr*ic+c)*mr+o%mr])
					}
				}
			}
			for o := range oc {
				for c := range ic {
					k := make([][]float64, 3)
					for ky := range 3 {
						k[ky] = make([]float64, 3)
						for kx := range 3 {
							if flip { // U[ξ][c'][o'] of w[o'][c'] rotated, here o = c', c = o'
								k[ky][kx] = float64(w[(c*ci+o)*9+(2-ky)*3+2-kx])
							} else {
								k[ky][kx] = float64(w[(o*ci+c)*9+ky*3+kx])
							}
						}
					}
					want := matMul64(matMul64(g, k), transpose64(g))
					for xi := range 36 {
						v, x := float64(got[(xi*oc+o)*ic+c]), want[xi/6][xi%6]
						if !(math.Abs(v-x) <= 4e-7*(1+math.Abs(x))) {
							t.Fatalf("%s flip=%v: U[%d][%d][%d] = %v, G k Gᵀ %v", level, flip, xi, o, c, v, x)
						}
					}
				}
			}
			if first == nil {
				first = got
				continue
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(first[i]) {
					t.Fatalf("%s flip=%v: element %d is %v, %v at %s", level, flip, i, got[i], first[i], isa.Levels()[0])
				}
			}
		}
	}
}

// The F(4,3) weight gradient's inverse transform, added into a weight
// gradient (the SIMD kernels' runs and the scalar tail), equals dw + Gᵀ dU G
// computed in float64, with the same bits at every instruction-set level.
func TestWinogradWeightGradTransform43(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const co, ci = 7, 5 // 35 kernels: two 16-lane runs and a tail, or four 8-lane runs and a tail
	const stride = co*ci + 3
	du := make([]float32, 36*stride)
	dw0 := make([]float32, co*ci*9)
	for i := range du {
		du[i] = float32(r.NormFloat64())
	}
	for i := range dw0 {
		dw0[i] = float32(r.NormFloat64())
	}
	g := winoF43.g
	var first []float32
	for _, level := range isa.Levels() {
		prev, err := isa.Set(level)
		if err != nil {
			t.Fatal(err)
		}
		dw := append([]float32(nil), dw0...)
		newWinoConv(winoF43, 1, ci, co, 8, 8).addWeightGrad(dw, du, stride)
		isa.Set(prev)
		for e := range co * ci {
			m := make([][]float64, 6)
			for i := range m {
				m[i] = make([]float64, 6)
				for j := range m[i] {
					m[i][j] = float64(du[(6*i+j)*stride+e])
				}
			}
			want := matMul64(matMul64(transpose64(g), m), g)
			for tap := range 9 {
				got, x := float64(dw[9*e+tap]), float64(dw0[9*e+tap])+want[tap/3][tap%3]
				if !(math.Abs(got-x) <= 1e-6*(1+math.Abs(x))) {
					t.Fatalf("%s: kernel %d tap %d = %v, dw + Gᵀ dU G = %v", level, e, tap, got, x)
				}
			}
		}
		if first == nil {
			first = dw
			continue
		}
		for i := range dw {
			if math.Float32bits(dw[i]) != math.Float32bits(first[i]) {
				t.Fatalf("%s: dw[%d] = %v, %v at %s", level, i, dw[i], first[i], isa.Levels()[0])
			}
		}
	}
}

// TestPadRows: padRows writes, at every ISA level, rows of w floats with a zero before and zeros after
// them to a row stride wp (w 1…40, every wp from w+1 to w+12, 1…3 rows), checked element by element
// against the layout itself, with the floats before and after dst's rows left alone.
func TestPadRows(t *testing.T) {
	for _, level := range isa.Levels() {
		prev, _ := isa.Set(level)
		for w := 1; w <= 40; w++ {
			for wp := w + 1; wp <= w+12; wp++ {
				for rows := 1; rows <= 3; rows++ {
					src := make([]float32, rows*w+3)
					for i := range src {
						src[i] = float32(i + 1)
					}
					buf := make([]float32, rows*wp+10)
					for i := range buf {
						buf[i] = -7
					}
					padRows(buf[5:5+rows*wp], src[:rows*w], rows, w, wp)
					for i, v := range buf {
						want := float32(-7)
						if j := i - 5; j >= 0 && j < rows*wp {
							want = 0
							if r, c := j/wp, j%wp; c >= 1 && c <= w {
								want = src[r*w+c-1]
							}
						}
						if v != want {
							t.Fatalf("%s w=%d wp=%d rows=%d: buf[%d] = %v, want %v", level, w, wp, rows, i-5, v, want)
						}
					}
				}
			}
		}
		isa.Set(prev)
	}
}
