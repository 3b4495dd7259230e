package sample

import (
	"fmt"
	"math"

	"holdgo/hold"
)

// mat is a dense n×n float64 matrix (n ≤ hold.MaxBlocks) for the per-step coefficients of the x̂₀
// samplers. hold keeps its Matrix arithmetic unexported; these few plain loops are what the
// coefficient tables need (products, transpose, inverse, Cholesky, polar factor).
type mat [hold.MaxBlocks][hold.MaxBlocks]float64

type vecN [hold.MaxBlocks]float64

func fromHold(m *hold.Matrix, n int) mat {
	var out mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i][j] = m.At(i, j)
		}
	}
	return out
}

func eye(n int) mat {
	var out mat
	for i := 0; i < n; i++ {
		out[i][i] = 1
	}
	return out
}

func mul(a, b *mat, n int) mat {
	var out mat
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			if a[i][k] == 0 {
				continue
			}
			for j := 0; j < n; j++ {
				out[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return out
}

func transpose(a *mat, n int) mat {
	var out mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i][j] = a[j][i]
		}
	}
	return out
}

func mulVec(a *mat, v vecN, n int) vecN {
	var out vecN
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i] += a[i][j] * v[j]
		}
	}
	return out
}

func axpby(alpha float64, a *mat, beta float64, b *mat, n int) mat {
	var out mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i][j] = alpha*a[i][j] + beta*b[i][j]
		}
	}
	return out
}

func symmetrize(a *mat, n int) mat {
	var out mat
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			out[i][j] = 0.5 * (a[i][j] + a[j][i])
		}
	}
	return out
}

// inverse returns a⁻¹ by Gauss–Jordan elimination with partial pivoting.
func inverse(a *mat, n int) (mat, error) {
	w, inv := *a, eye(n)
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(w[r][c]) > math.Abs(w[p][c]) {
				p = r
			}
		}
		if w[p][c] == 0 || math.IsNaN(w[p][c]) {
			return mat{}, fmt.Errorf("singular %d×%d matrix", n, n)
		}
		w[c], w[p] = w[p], w[c]
		inv[c], inv[p] = inv[p], inv[c]
		piv := w[c][c]
		for j := 0; j < n; j++ {
			w[c][j] /= piv
			inv[c][j] /= piv
		}
		for r := 0; r < n; r++ {
			if r == c || w[r][c] == 0 {
				continue
			}
			f := w[r][c]
			for j := 0; j < n; j++ {
				w[r][j] -= f * w[c][j]
				inv[r][j] -= f * inv[c][j]
			}
		}
	}
	return inv, nil
}

// cholesky returns the lower factor of a symmetric positive semi-definite a; pivots that rounding
// makes slightly negative are set to zero (their column is then zero).
func cholesky(a *mat, n int) mat {
	var l mat
	for j := 0; j < n; j++ {
		s := a[j][j]
		for k := 0; k < j; k++ {
			s -= l[j][k] * l[j][k]
		}
		if !(s > 0) {
			continue
		}
		l[j][j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			v := a[i][j]
			for k := 0; k < j; k++ {
				v -= l[i][k] * l[j][k]
			}
			l[i][j] = v / l[j][j]
		}
	}
	return l
}

// polar returns the orthogonal factor U of a = U·P (P symmetric positive definite) by the Newton
// iteration U ← ½(U + U⁻ᵀ), which converges quadratically for a non-singular a.
func polar(a *mat, n int) (mat, error) {
	u := *a
	for range 100 {
		inv, err := inverse(&u, n)
		if err != nil {
			return mat{}, err
		}
		invT := transpose(&inv, n)
		next := axpby(0.5, &u, 0.5, &invT, n)
		var diff float64
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				diff = math.Max(diff, math.Abs(next[i][j]-u[i][j]))
			}
		}
		u = next
		if diff < 1e-15 {
			break
		}
	}
	return u, nil
}

// lowerInverse returns l⁻¹ of a lower-triangular l by substitution, column by column. Unlike
// inverse it never pivots, so the triangular structure (and the componentwise accuracy of
// substitution on graded factors such as a kernel's Cholesky factor) is kept.
func lowerInverse(l *mat, n int) (mat, error) {
	var out mat
	for i := 0; i < n; i++ {
		if !(l[i][i] != 0) || math.IsInf(l[i][i], 0) {
			return mat{}, fmt.Errorf("singular %d×%d triangular matrix (diagonal %d is %g)", n, n, i, l[i][i])
		}
	}
	for c := 0; c < n; c++ {
		out[c][c] = 1 / l[c][c]
		for i := c + 1; i < n; i++ {
			var s float64
			for k := c; k < i; k++ {
				s -= l[i][k] * out[k][c]
			}
			out[i][c] = s / l[i][i]
		}
	}
	return out, nil
}

// tall is a dense matrix of up to 2n×2n (n ≤ hold.MaxBlocks): the stacked factors of the array
// (square-root) form of the x̂₀ posterior step.
type tall [2 * hold.MaxBlocks][2 * hold.MaxBlocks]float64

// householderQR returns the full factorisation x = q·r of a rows×cols matrix (cols ≤ rows ≤
// 2·MaxBlocks) by Householder reflections: q orthogonal (rows×rows), r upper triangular
// (rows×cols) with a non-negative diagonal. It is backward stable column by column, whatever the
// conditioning of x.
func householderQR(x *tall, rows, cols int) (q, r tall) {
	r = *x
	for i := 0; i < rows; i++ {
		q[i][i] = 1
	}
	for c := 0; c < cols && c < rows-1; c++ {
		var norm float64
		for i := c; i < rows; i++ {
			norm = math.Hypot(norm, r[i][c])
		}
		if norm == 0 {
			continue
		}
		// v = x_c + sign(x_cc)‖x_c‖e_c: no cancellation in v_c.
		var v [2 * hold.MaxBlocks]float64
		alpha := -math.Copysign(norm, r[c][c])
		for i := c; i < rows; i++ {
			v[i] = r[i][c]
		}
		v[c] -= alpha
		var vv float64
		for i := c; i < rows; i++ {
			vv += v[i] * v[i]
		}
		// r ← (I − 2vvᵀ/vᵀv)r, q ← q(I − 2vvᵀ/vᵀv)
		for j := c; j < cols; j++ {
			var s float64
			for i := c; i < rows; i++ {
				s += v[i] * r[i][j]
			}
			f := 2 * s / vv
			for i := c; i < rows; i++ {
				r[i][j] -= f * v[i]
			}
		}
		for i := 0; i < rows; i++ {
			var s float64
			for k := c; k < rows; k++ {
				s += q[i][k] * v[k]
			}
			f := 2 * s / vv
			for k := c; k < rows; k++ {
				q[i][k] -= f * v[k]
			}
		}
		for i := c + 1; i < rows; i++ {
			r[i][c] = 0
		}
	}
	for c := 0; c < cols && c < rows; c++ { // non-negative diagonal: flip row c of r and column c of q
		if r[c][c] < 0 {
			for j := c; j < cols; j++ {
				r[c][j] = -r[c][j]
			}
			for i := 0; i < rows; i++ {
				q[i][c] = -q[i][c]
			}
		}
	}
	return q, r
}
