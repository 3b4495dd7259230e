package hold

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
)

// hold3_poly.json holds exact (symbolically derived) polynomial forms of the HOLD-3 kernel quantities
// in x = e^{−τ} and y = −expm1(−τ), with coefficients polynomial in α (docs/math.md#hold-3-closed-form):
// under "S", for each of the names below, "x" and "y" list c[m][j], the coefficient of var^m·α^j.
//
//go:embed hold3_poly.json
var hold3PolyJSON []byte

// The quantities of docs/math.md#hold-3-closed-form, for S = L·Σ_τ: its six entries and the leading minors
// D1 = S_qq, D2 = S_qq S_pp − S_qp², D3 = det S and M_sp = S_ps S_qq − S_qs S_qp.
const (
	h3qq = iota
	h3qp
	h3qs
	h3pp
	h3ps
	h3ss
	h3D1
	h3D2
	h3D3
	h3Msp
	h3Count
)

var hold3Names = [h3Count]string{"qq", "qp", "qs", "pp", "ps", "ss", "D1", "D2", "D3", "Msp"}

// hold3SwitchTau is where the evaluator switches from the y-form (no cancellation at small τ) to the
// x-form (no cancellation at large τ); with it every entry stays within 2e-14 of its row's largest entry
// over 1e-5 ≤ τ ≤ 12 in TestKernelVectors and TestKernelDense (docs/math.md#hold-3-closed-form).
const hold3SwitchTau = 1.0

// hold3ExpF holds exp(τF)_ij = x·(c0 + c1·y + c2·y²) (the table of docs/math.md#hold-3-closed-form).
var hold3ExpF = func() (c [3][3][3]float64) {
	s := math.Sqrt(10)
	c[0][0] = [3]float64{1, 1, 0.5}
	c[0][1] = [3]float64{0, 1, 1.5}
	c[0][2] = [3]float64{0, 0, 0.5 * s}
	c[1][0] = [3]float64{0, -1, -1.5}
	c[1][1] = [3]float64{1, 1, -4.5}
	c[1][2] = [3]float64{0, s, -1.5 * s}
	c[2][0] = [3]float64{0, 0, 0.5 * s}
	c[2][1] = [3]float64{0, -s, 1.5 * s}
	c[2][2] = [3]float64{1, -5, 5}
	return c
}()

// hold3Poly holds the coefficients (α folded in) of every quantity in both variables.
type hold3Poly struct {
	x, y [h3Count][]float64
}

// hold3Kernel is the closed-form, cancellation-free HOLD-3 kernel (ξ = 6, γ = √10): polynomials in
// x or y for Σ_τ and its leading minors, the Cholesky factor from the minors (docs/math.md#hold-3-closed-form):
// chol = [[√D1, 0, 0], [S_qp/√D1, √(D2/D1), 0], [S_qs/√D1, M_sp/√(D1·D2), √(D3/D2)]], ℓ = √(D2/D3).
// Relative accuracy ≈ 1e-15 for every entry, including t → 1e-7.
type hold3Kernel struct {
	poly [2]hold3Poly // [Σ_0 = 0, Σ_0 = diag(0, α, α)]
}

func newHold3Kernel(alpha float64) (*hold3Kernel, error) {
	var file struct {
		S map[string]struct {
			X [][]float64 `json:"x"`
			Y [][]float64 `json:"y"`
		} `json:"S"`
	}
	if err := json.Unmarshal(hold3PolyJSON, &file); err != nil {
		return nil, fmt.Errorf("parse embedded hold3_poly.json: %w", err)
	}
	k := &hold3Kernel{}
	for idx, a := range [2]float64{0, alpha} {
		for q, name := range hold3Names {
			entry, ok := file.S[name]
			if !ok {
				return nil, fmt.Errorf("embedded hold3_poly.json lacks S.%s", name)
			}
			k.poly[idx].x[q] = collapseAlpha(entry.X, a)
			k.poly[idx].y[q] = collapseAlpha(entry.Y, a)
		}
	}
	return k, nil
}

// collapseAlpha turns c[m][j] (coefficient of var^m·α^j) into c_m = Σ_j c[m][j]·α^j.
func collapseAlpha(c [][]float64, alpha float64) []float64 {
	out := make([]float64, len(c))
	for m, row := range c {
		var v float64
		for j := len(row) - 1; j >= 0; j-- {
			v = v*alpha + row[j]
		}
		out[m] = v
	}
	return out
}

func horner(c []float64, v float64) float64 {
	var s float64
	for m := len(c) - 1; m >= 0; m-- {
		s = s*v + c[m]
	}
	return s
}

func (k *hold3Kernel) eval(tau float64, marginal bool) nativeKernel {
	p := &k.poly[0]
	if marginal {
		p = &k.poly[1]
	}
	x, y := math.Exp(-tau), -math.Expm1(-tau)
	coef, v := &p.y, y
	if tau >= hold3SwitchTau {
		coef, v = &p.x, x
	}
	var q [h3Count]float64
	for i := range q {
		q[i] = horner(coef[i], v)
	}
	var out nativeKernel
	out.exp.N, out.sigma.N, out.chol.N = 3, 3, 3
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			c := hold3ExpF[i][j]
			out.exp.a[i][j] = x * (c[0] + y*(c[1]+y*c[2]))
		}
	}
	sig := &out.sigma.a
	sig[0][0], sig[0][1], sig[0][2] = q[h3qq], q[h3qp], q[h3qs]
	sig[1][1], sig[1][2], sig[2][2] = q[h3pp], q[h3ps], q[h3ss]
	sig[1][0], sig[2][0], sig[2][1] = sig[0][1], sig[0][2], sig[1][2]

	d1, d2, d3 := q[h3D1], q[h3D2], q[h3D3]
	r1 := math.Sqrt(d1)
	ch := &out.chol.a
	ch[0][0] = r1
	ch[1][0] = q[h3qp] / r1
	ch[1][1] = math.Sqrt(d2 / d1)
	ch[2][0] = q[h3qs] / r1
	ch[2][1] = q[h3Msp] / math.Sqrt(d1*d2)
	ch[2][2] = math.Sqrt(d3 / d2)
	out.ell = math.Sqrt(d2 / d3)
	return out
}
