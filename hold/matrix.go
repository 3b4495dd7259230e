package hold

import (
	"fmt"
	"math"
)

// MaxBlocks is the largest number of blocks per data dimension (HOLD-4).
const MaxBlocks = 4

// Matrix is a small dense n×n float64 matrix (n ≤ MaxBlocks) acting on the n blocks of one data
// dimension. It is a value type: kernels are computed per sample without allocation.
type Matrix struct {
	N int
	a [MaxBlocks][MaxBlocks]float64
}

// At returns entry (i, j).
func (m *Matrix) At(i, j int) float64 { return m.a[i][j] }

// Set sets entry (i, j).
func (m *Matrix) Set(i, j int, v float64) { m.a[i][j] = v }

// Rows returns the matrix as a fresh slice of rows (for printing and JSON).
func (m *Matrix) Rows() [][]float64 {
	rows := make([][]float64, m.N)
	for i := range rows {
		rows[i] = append([]float64(nil), m.a[i][:m.N]...)
	}
	return rows
}

func (m *Matrix) String() string { return fmt.Sprint(m.Rows()) }

// identity returns the n×n identity.
func identity(n int) Matrix {
	m := Matrix{N: n}
	for i := 0; i < n; i++ {
		m.a[i][i] = 1
	}
	return m
}

// matMul returns a·b.
func matMul(a, b *Matrix) Matrix {
	c := Matrix{N: a.N}
	for i := 0; i < a.N; i++ {
		for j := 0; j < a.N; j++ {
			var s float64
			for k := 0; k < a.N; k++ {
				s += a.a[i][k] * b.a[k][j]
			}
			c.a[i][j] = s
		}
	}
	return c
}

// mulVec returns m·v for v of length m.N.
func (m *Matrix) mulVec(v []float64) [MaxBlocks]float64 {
	var r [MaxBlocks]float64
	for i := 0; i < m.N; i++ {
		var s float64
		for k := 0; k < m.N; k++ {
			s += m.a[i][k] * v[k]
		}
		r[i] = s
	}
	return r
}

// transpose returns mᵀ.
func (m *Matrix) transpose() Matrix {
	t := Matrix{N: m.N}
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			t.a[i][j] = m.a[j][i]
		}
	}
	return t
}

// scaleRowsCols returns diag(r)·m·diag(c).
func (m *Matrix) scaleRowsCols(r, c []float64) Matrix {
	s := Matrix{N: m.N}
	for i := 0; i < m.N; i++ {
		for j := 0; j < m.N; j++ {
			s.a[i][j] = r[i] * m.a[i][j] * c[j]
		}
	}
	return s
}

// CholRankOneUpdate returns the lower Cholesky factor of L·Lᵀ + v·vᵀ for a lower-triangular L with a
// positive diagonal. It applies Givens rotations to [L | v], which is backward stable even when L is
// very ill-conditioned (tiny leading pivots at small t).
func CholRankOneUpdate(l *Matrix, v [MaxBlocks]float64) Matrix {
	u := *l
	n := u.N
	for k := 0; k < n; k++ {
		r := math.Hypot(u.a[k][k], v[k])
		if r == 0 {
			continue
		}
		c, s := u.a[k][k]/r, v[k]/r
		u.a[k][k] = r
		for i := k + 1; i < n; i++ {
			lik, vi := u.a[i][k], v[i]
			u.a[i][k] = c*lik + s*vi
			v[i] = c*vi - s*lik
		}
	}
	return u
}

// solveLower solves l·w = r in place (forward substitution) for a lower-triangular l.
func solveLower(l *Matrix, r *[MaxBlocks]float64) {
	for i := 0; i < l.N; i++ {
		s := r[i]
		for k := 0; k < i; k++ {
			s -= l.a[i][k] * r[k]
		}
		r[i] = s / l.a[i][i]
	}
}

// solveUpperT solves lᵀ·w = r in place (back substitution) for a lower-triangular l.
func solveUpperT(l *Matrix, r *[MaxBlocks]float64) {
	for i := l.N - 1; i >= 0; i-- {
		s := r[i]
		for k := i + 1; k < l.N; k++ {
			s -= l.a[k][i] * r[k]
		}
		r[i] = s / l.a[i][i]
	}
}
