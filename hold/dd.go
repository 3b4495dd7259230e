package hold

import "math"

// dd is a double-double number hi + lo with |lo| ≤ ulp(hi)/2: about 32 significant digits
// (unit roundoff 2⁻¹⁰⁶ ≈ 1.2e-32). The general-n kernel path computes Σ_t and its Cholesky factor in
// this precision, because Σ_t is so ill-conditioned at small t (cond ≈ 1e13 at t = 1e-3 for HOLD-3,
// more for HOLD-4) that rounding its entries to float64 alone costs up to 1e-3 in the factor
// (docs/math.md#float64-accuracy). Algorithms: Dekker / Knuth two-sum and an FMA-based two-product (as in the QD
// library of Hida, Li and Bailey).
type dd struct{ hi, lo float64 }

func ddFrom(x float64) dd { return dd{x, 0} }

func (a dd) float() float64 { return a.hi + a.lo }

// twoSum returns s = fl(a+b) and the exact rounding error e, a+b = s+e.
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// quickTwoSum is twoSum for |a| ≥ |b|.
func quickTwoSum(a, b float64) (s, e float64) {
	s = a + b
	e = b - (s - a)
	return s, e
}

// twoProd returns p = fl(a·b) and the exact error e, a·b = p+e.
func twoProd(a, b float64) (p, e float64) {
	p = a * b
	e = math.FMA(a, b, -p)
	return p, e
}

func ddAdd(a, b dd) dd {
	s, e := twoSum(a.hi, b.hi)
	t, f := twoSum(a.lo, b.lo)
	e += t
	s, e = quickTwoSum(s, e)
	e += f
	s, e = quickTwoSum(s, e)
	return dd{s, e}
}

func ddNeg(a dd) dd { return dd{-a.hi, -a.lo} }

func ddSub(a, b dd) dd { return ddAdd(a, ddNeg(b)) }

func ddMul(a, b dd) dd {
	p, e := twoProd(a.hi, b.hi)
	e += a.hi*b.lo + a.lo*b.hi
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

// ddMulF multiplies by a float64.
func ddMulF(a dd, b float64) dd {
	p, e := twoProd(a.hi, b)
	e += a.lo * b
	p, e = quickTwoSum(p, e)
	return dd{p, e}
}

func ddDiv(a, b dd) dd {
	q1 := a.hi / b.hi
	r := ddSub(a, ddMulF(b, q1))
	q2 := r.hi / b.hi
	r = ddSub(r, ddMulF(b, q2))
	q3 := r.hi / b.hi
	q1, q2 = quickTwoSum(q1, q2)
	return ddAdd(dd{q1, q2}, dd{q3, 0})
}

// ddSqrt returns √a (NaN for a < 0) by one Newton step from the float64 root.
func ddSqrt(a dd) dd {
	if a.hi <= 0 {
		if a.hi == 0 {
			return dd{}
		}
		return dd{math.NaN(), 0}
	}
	x := math.Sqrt(a.hi)
	p, e := twoProd(x, x)
	r := ddSub(a, dd{p, e})
	return ddAdd(dd{x, 0}, dd{r.hi / (2 * x), 0})
}

// ddMat is a small square matrix of dd numbers.
type ddMat struct {
	n int
	a [MaxBlocks][MaxBlocks]dd
}

func ddIdentity(n int) ddMat {
	m := ddMat{n: n}
	for i := 0; i < n; i++ {
		m.a[i][i] = ddFrom(1)
	}
	return m
}

func ddMatMul(x, y *ddMat) ddMat {
	z := ddMat{n: x.n}
	for i := 0; i < x.n; i++ {
		for j := 0; j < x.n; j++ {
			var s dd
			for k := 0; k < x.n; k++ {
				s = ddAdd(s, ddMul(x.a[i][k], y.a[k][j]))
			}
			z.a[i][j] = s
		}
	}
	return z
}

// ddMatMulT returns x·yᵀ.
func ddMatMulT(x, y *ddMat) ddMat {
	z := ddMat{n: x.n}
	for i := 0; i < x.n; i++ {
		for j := 0; j < x.n; j++ {
			var s dd
			for k := 0; k < x.n; k++ {
				s = ddAdd(s, ddMul(x.a[i][k], y.a[j][k]))
			}
			z.a[i][j] = s
		}
	}
	return z
}

func (m *ddMat) float() Matrix {
	f := Matrix{N: m.n}
	for i := 0; i < m.n; i++ {
		for j := 0; j < m.n; j++ {
			f.a[i][j] = m.a[i][j].float()
		}
	}
	return f
}

// ddCholesky returns the lower Cholesky factor of the symmetric matrix s (lower triangle read).
// Non-positive pivots give NaN entries; callers only pass matrices that are positive definite in exact
// arithmetic and accurate to dd precision.
func ddCholesky(s *ddMat) ddMat {
	c := ddMat{n: s.n}
	for j := 0; j < s.n; j++ {
		d := s.a[j][j]
		for k := 0; k < j; k++ {
			d = ddSub(d, ddMul(c.a[j][k], c.a[j][k]))
		}
		if d.hi <= 0 {
			d = dd{math.NaN(), 0}
		}
		c.a[j][j] = ddSqrt(d)
		for i := j + 1; i < s.n; i++ {
			v := s.a[i][j]
			for k := 0; k < j; k++ {
				v = ddSub(v, ddMul(c.a[i][k], c.a[j][k]))
			}
			c.a[i][j] = ddDiv(v, c.a[j][j])
		}
	}
	return c
}
