// Package linref is a plain reference for small dense linear systems in float64, for tests that must
// not share a factorisation with the code they check: Gaussian elimination with partial pivoting on
// the symmetrically equilibrated matrix D⁻¹AD⁻¹ (D = √|diag A|), which keeps the kernel covariances
// of the SDE family (entries from 10⁻³⁵ to 1) solvable in float64.
package linref

import "math"

// Solve returns x with A·x = b for a square A with a non-zero diagonal (A and b are not changed).
func Solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	d := make([]float64, n)
	for i := range n {
		d[i] = math.Sqrt(math.Abs(a[i][i]))
	}
	m := make([][]float64, n)
	y := make([]float64, n)
	for i := range n {
		m[i] = make([]float64, n)
		for j := range n {
			m[i][j] = a[i][j] / (d[i] * d[j])
		}
		y[i] = b[i] / d[i]
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[p][c]) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		y[c], y[p] = y[p], y[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for j := c; j < n; j++ {
				m[r][j] -= f * m[c][j]
			}
			y[r] -= f * y[c]
		}
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for j := i + 1; j < n; j++ {
			s -= m[i][j] * x[j]
		}
		x[i] = s / m[i][i]
	}
	for i := range n {
		x[i] /= d[i]
	}
	return x
}
