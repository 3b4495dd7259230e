package tensor

import (
	"fmt"
	"math"
	"testing"
)

// Cases of the image ops (conv.go, norm.go, fir.go) for TestOpsAgainstReference:
// awkward sizes (1, odd, non-multiples of the GEMM tiles), strides, padding,
// bias or none, and the accumulate (Beta) forms of the gradients.
func init() {
	type conv struct{ n, c, h, w, o, k, stride, pad int }
	convs := []conv{
		{1, 1, 1, 1, 1, 1, 1, 0}, {2, 3, 5, 7, 4, 3, 1, 1}, {3, 5, 8, 8, 6, 3, 2, 1}, {2, 4, 9, 9, 3, 3, 2, 0},
		{2, 17, 6, 5, 33, 1, 1, 0}, {1, 2, 3, 3, 2, 3, 1, 2}, {2, 9, 16, 16, 32, 3, 1, 1}, {1, 3, 7, 6, 5, 1, 2, 0},
	}
	for _, cv := range convs {
		name := fmt.Sprintf("%+v", cv)
		shapes := func(r *RNG, d func(*Tensor) *Tensor) (x, w, dy *Tensor) {
			x, w = d(RandN(r, cv.n, cv.c, cv.h, cv.w)), d(RandN(r, cv.o, cv.c, cv.k, cv.k))
			oh, ow := ConvOutSize(cv.h, cv.k, cv.stride, cv.pad), ConvOutSize(cv.w, cv.k, cv.stride, cv.pad)
			return x, w, d(RandN(r, cv.n, cv.o, oh, ow))
		}
		extraCases[OpConv2d] = append(extraCases[OpConv2d],
			opCase{"Conv2d" + name, func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
				x, w, _ := shapes(r, d)
				return Conv2d(nil, x, w, nil, cv.stride, cv.pad)
			}},
			opCase{"Conv2dBias" + name, func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
				x, w, _ := shapes(r, d)
				return Conv2d(nil, x, w, d(RandN(r, cv.o)), cv.stride, cv.pad)
			}})
		for _, beta := range []float32{0, 1, 0.5} {
			extraCases[OpConv2dGradInput] = append(extraCases[OpConv2dGradInput],
				opCase{fmt.Sprintf("Conv2dGradInput%s/%v", name, beta), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
					x, w, dy := shapes(r, d)
					return Conv2dGradInput(x, dy, w, cv.stride, cv.pad, beta)
				}})
			extraCases[OpConv2dGradWeight] = append(extraCases[OpConv2dGradWeight],
				opCase{fmt.Sprintf("Conv2dGradWeight%s/%v", name, beta), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
					x, w, dy := shapes(r, d)
					return Conv2dGradWeight(w, x, dy, cv.stride, cv.pad, beta)
				}})
		}
	}
	type gn struct {
		shape  []int
		groups int
	}
	for _, c := range []gn{{[]int{1, 1, 1}, 1}, {[]int{2, 8, 5, 3}, 2}, {[]int{3, 12, 7}, 3}, {[]int{2, 64, 9, 9}, 16}, {[]int{1, 4}, 4}, {[]int{0, 4, 2}, 2}} {
		name := fmt.Sprintf("%v/%d", c.shape, c.groups)
		ch := c.shape[1]
		inputs := func(r *RNG, d func(*Tensor) *Tensor) (x, gamma, beta, dy *Tensor) {
			x = RandN(r, c.shape...)
			MulScalar(x, AddScalar(x, x, 3), 2) // mean and scale away from 0 and 1
			return d(x), d(RandN(r, ch)), d(RandN(r, ch)), d(RandN(r, c.shape...))
		}
		extraCases[OpGroupNorm] = append(extraCases[OpGroupNorm], opCase{"GroupNorm" + name, func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			x, g, b, _ := inputs(r, d)
			return GroupNorm(nil, x, g, b, c.groups, 1e-6)
		}})
		extraCases[OpGroupNormGrad] = append(extraCases[OpGroupNormGrad], opCase{"GroupNormGrad" + name, func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			x, g, _, dy := inputs(r, d)
			return GroupNormGrad(nil, x, g, dy, c.groups, 1e-6)
		}})
		extraCases[OpGroupNormParamGrad] = append(extraCases[OpGroupNormParamGrad], opCase{"GroupNormParamGrad" + name, func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			x, _, _, dy := inputs(r, d)
			return GroupNormParamGrad(nil, x, dy, c.groups, 1e-6)
		}})
	}
	for _, sh := range [][]int{{1}, {3}, {4, 17}, {2, 64, 64}, {5, 0}, {2, 3, 300}} {
		extraCases[OpSoftmax] = append(extraCases[OpSoftmax], opCase{fmt.Sprintf("Softmax%v", sh), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			x := RandN(r, sh...)
			return Softmax(nil, d(MulScalar(x, x, 5)))
		}})
		extraCases[OpSoftmaxGrad] = append(extraCases[OpSoftmaxGrad], opCase{fmt.Sprintf("SoftmaxGrad%v", sh), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
			y := Softmax(nil, RandN(r, sh...))
			return SoftmaxGrad(nil, d(y), d(RandN(r, sh...)))
		}})
	}
	for _, g := range []FIRGeom{FIRUpsample, FIRDownsample, FIRBlur, FIRUpsample.Adjoint(5), FIRDownsample.Adjoint(8), FIRBlur.Adjoint(6)} {
		for _, sh := range [][]int{{1, 1, 2, 2}, {2, 3, 8, 6}, {1, 2, 5, 5}, {3, 4, 16, 16}} {
			if !g.valid(sh[2]) || !g.valid(sh[3]) {
				continue
			}
			extraCases[OpUpFIRDn2d] = append(extraCases[OpUpFIRDn2d], opCase{fmt.Sprintf("UpFIRDn2d%+v%v", g, sh), func(r *RNG, d func(*Tensor) *Tensor) *Tensor {
				return UpFIRDn2d(nil, d(RandN(r, sh...)), g)
			}})
		}
	}
}

// TestFIRClosedForms checks UpFIRDn2d against the 1-D formulas of
// reference-spec §1.3 on a separable input.
func TestFIRClosedForms(t *testing.T) {
	const n = 6
	u := []float64{0.3, -1.2, 2.0, 0.7, -0.4, 1.1}
	at := func(i int) float64 {
		if i < 0 || i >= n {
			return 0
		}
		return u[i]
	}
	x := Zeros(1, 1, n, n)
	for i := range n {
		for j := range n {
			x.data[i*n+j] = float32(at(i) * at(j))
		}
	}
	check := func(name string, g FIRGeom, f func(i int) float64) {
		y := UpFIRDn2d(nil, x, g)
		m := g.OutSize(n)
		for i := range m {
			for j := range m {
				want := f(i) * f(j)
				if got := float64(y.data[i*m+j]); math.Abs(got-want) > 1e-5 {
					t.Fatalf("%s[%d,%d] = %g, want %g", name, i, j, got, want)
				}
			}
		}
	}
	check("down", FIRDownsample, func(i int) float64 {
		return (at(2*i-1) + 3*at(2*i) + 3*at(2*i+1) + at(2*i+2)) / 8
	})
	check("up", FIRUpsample, func(i int) float64 {
		m := i / 2
		if i%2 == 0 {
			return 0.25*at(m-1) + 0.75*at(m)
		}
		return 0.75*at(m) + 0.25*at(m+1)
	})
	k := []float64{1, 3, 3, 1}
	check("blur", FIRBlur, func(r int) float64 {
		var s float64
		for a := range 4 {
			s += k[a] / 8 * at(r+a-2)
		}
		return s
	})
}

// TestFIRAdjoint checks ⟨UpFIRDn2d(x), y⟩ = ⟨x, UpFIRDn2d_adj(y)⟩ for the
// geometries NCSN++ uses, on even and odd sizes.
func TestFIRAdjoint(t *testing.T) {
	r := NewRNG(3)
	for _, g := range []FIRGeom{FIRUpsample, FIRDownsample, FIRBlur} {
		for _, n := range []int{2, 5, 8} {
			x := RandN(r, 2, 3, n, n)
			y := RandN(r, 2, 3, g.OutSize(n), g.OutSize(n))
			ax := UpFIRDn2d(nil, x, g)
			aty := UpFIRDn2d(nil, y, g.Adjoint(n))
			if !SameShape(aty, x) {
				t.Fatalf("%+v on %d: adjoint shape %v", g, n, aty.Shape())
			}
			var l, rr float64
			for i, v := range ax.Data() {
				l += float64(v) * float64(y.Data()[i])
			}
			for i, v := range aty.Data() {
				rr += float64(v) * float64(x.Data()[i])
			}
			if math.Abs(l-rr) > 1e-4*math.Max(1, math.Abs(l)) {
				t.Errorf("%+v on %d: ⟨Ax, y⟩ = %g, ⟨x, Aᵀy⟩ = %g", g, n, l, rr)
			}
		}
	}
}
