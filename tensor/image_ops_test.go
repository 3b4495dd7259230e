package tensor

import (
	"math"
	"testing"
)

// TestFIRClosedForms checks UpFIRDn2d against the 1-D formulas of
// docs/ncsnpp.md#fir-resampling on a separable input.
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
				if got := float64(y.data[i*m+j]); !(math.Abs(got-want) <= 1e-5) {
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
			if !(math.Abs(l-rr) <= 1e-4*math.Max(1, math.Abs(l))) {
				t.Errorf("%+v on %d: ⟨Ax, y⟩ = %g, ⟨x, Aᵀy⟩ = %g", g, n, l, rr)
			}
		}
	}
}
