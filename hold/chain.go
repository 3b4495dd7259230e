package hold

import (
	"math"
	"math/big"
)

// chainKernel evaluates the kernel of a general chain dz = F z dτ + √(2ξ) e_n dW with
// F = J − ξ e_n e_nᵀ (J tridiagonal antisymmetric), whose stationary law is N(0, I).
//
// Accuracy is the whole difficulty: Σ_τ is extremely ill-conditioned for small τ (its entries scale
// like different powers of τ), so both Σ_τ and its Cholesky factor are formed in double-double
// arithmetic (dd.go) and rounded to float64 at the end. Two regimes:
//
//   - τ ≤ τ_s = 1/ρ (ρ = 2‖F‖∞ bounds the Lyapunov operator X ↦ FX + XFᵀ): Taylor series
//     e^{τF} = Σ τ^m F^m/m! and Σ_τ = Σ τ^m C_m with C_0 = Σ_0, C_{m+1} = (F C_m + C_m Fᵀ + [m=0]·2ξ e_n e_nᵀ)/(m+1),
//     the series of Van Loan's block exponential. Every term is added, none is cancelled, so each entry
//     keeps ≈ 30 significant digits however small it is (Σ^qq ∝ τ⁷ for HOLD-4 without α).
//   - τ > τ_s: e^{τF} by scaling and squaring of the series, and Σ_τ = I + e^{τF}(Σ_0 − I)e^{τFᵀ}, exact
//     because F + Fᵀ + 2ξ e_n e_nᵀ = 0. Here Σ_τ is no longer small, so the identity's cancellation is
//     harmless in double-double.
//
// The series coefficients are computed once in 256-bit big.Float arithmetic and stored as dd.
type chainKernel struct {
	n         int
	rho       float64
	tauSeries float64
	f         ddMat
	alpha     dd
	expCoef   []ddMat    // F^m/m!
	sigCoef   [2][]ddMat // C_m for Σ_0 = 0 (index 0) and Σ_0 = diag(0, α, …) (index 1)
}

const (
	chainSeriesTol = 1e-40 // truncate when (ρτ)^k/k! < tol (relative to an entry's leading term)
	chainMaxExtra  = 40    // terms beyond the highest leading order 2n−1
	bigPrec        = 256
)

func newChainKernel(coupling []float64, xi, alpha float64) *chainKernel {
	f := chainDrift(coupling, xi)
	n := f.N
	var norm float64
	for i := 0; i < n; i++ {
		var row float64
		for j := 0; j < n; j++ {
			row += math.Abs(f.a[i][j])
		}
		norm = math.Max(norm, row)
	}
	k := &chainKernel{n: n, rho: 2 * norm, alpha: ddFrom(alpha)}
	k.tauSeries = 1 / k.rho
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			k.f.a[i][j] = ddFrom(f.a[i][j])
		}
	}
	k.f.n = n
	terms := 2*n + chainMaxExtra

	bf := newBigMat(n)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			bf[i][j].SetFloat64(f.a[i][j])
		}
	}
	// e^{τF}: E_0 = I, E_{m+1} = F E_m/(m+1).
	e := newBigMat(n)
	for i := 0; i < n; i++ {
		e[i][i].SetInt64(1)
	}
	for m := 0; m <= terms; m++ {
		k.expCoef = append(k.expCoef, e.dd())
		e = bigMatMul(bf, e).divide(m + 1)
	}
	// Σ_τ: C_0 = Σ_0, C_{m+1} = (F C_m + C_m Fᵀ + [m=0]·2ξ e_n e_nᵀ)/(m+1).
	for idx := 0; idx < 2; idx++ {
		c := newBigMat(n)
		if idx == 1 {
			for i := 1; i < n; i++ {
				c[i][i].SetFloat64(alpha)
			}
		}
		for m := 0; m <= terms; m++ {
			k.sigCoef[idx] = append(k.sigCoef[idx], c.dd())
			fc := bigMatMul(bf, c)
			next := newBigMat(n)
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					next[i][j].Add(fc[i][j], fc[j][i]) // F C + (F C)ᵀ = F C + C Fᵀ, C symmetric
				}
			}
			if m == 0 {
				noise := new(big.Float).SetPrec(bigPrec).SetFloat64(xi)
				noise.Mul(noise, big.NewFloat(2))
				next[n-1][n-1].Add(next[n-1][n-1], noise)
			}
			c = next.divide(m + 1)
		}
	}
	return k
}

// seriesTerms returns how many Taylor terms are needed at τ ≤ τ_s.
func (k *chainKernel) seriesTerms(tau float64) int {
	x := k.rho * tau
	term, extra := 1.0, 0
	for term >= chainSeriesTol && extra < chainMaxExtra {
		extra++
		term *= x / float64(extra)
	}
	return 2*k.n + extra
}

// series evaluates Σ_m coef[m]·τ^m up to m = terms by Horner's rule (entries (i, j) with j ≤ i only
// when symmetric is set).
func (k *chainKernel) series(coef []ddMat, tau float64, terms int, symmetric bool) ddMat {
	out := ddMat{n: k.n}
	for i := 0; i < k.n; i++ {
		for j := 0; j < k.n; j++ {
			if symmetric && j > i {
				continue
			}
			acc := coef[terms].a[i][j]
			for m := terms - 1; m >= 0; m-- {
				acc = ddAdd(ddMulF(acc, tau), coef[m].a[i][j])
			}
			out.a[i][j] = acc
			if symmetric {
				out.a[j][i] = acc
			}
		}
	}
	return out
}

func (k *chainKernel) eval(tau float64, marginal bool) nativeKernel {
	idx := 0
	if marginal {
		idx = 1
	}
	var e, sigma ddMat
	if tau <= k.tauSeries {
		terms := k.seriesTerms(tau)
		e = k.series(k.expCoef, tau, terms, false)
		sigma = k.series(k.sigCoef[idx], tau, terms, true)
	} else {
		squarings := int(math.Ceil(math.Log2(tau / k.tauSeries)))
		small := math.Ldexp(tau, -squarings)
		e = k.series(k.expCoef, small, k.seriesTerms(small), false)
		for i := 0; i < squarings; i++ {
			e = ddMatMul(&e, &e)
		}
		// Σ = I + E(Σ_0 − I)Eᵀ
		d := ddIdentity(k.n)
		for i := 0; i < k.n; i++ {
			d.a[i][i] = ddFrom(-1)
			if marginal && i > 0 {
				d.a[i][i] = ddSub(k.alpha, ddFrom(1))
			}
		}
		ed := ddMatMul(&e, &d)
		sigma = ddMatMulT(&ed, &e)
		for i := 0; i < k.n; i++ {
			sigma.a[i][i] = ddAdd(sigma.a[i][i], ddFrom(1))
			for j := 0; j < i; j++ { // symmetrise exactly
				sigma.a[j][i] = sigma.a[i][j]
			}
		}
	}
	chol := ddCholesky(&sigma)
	ell := ddDiv(ddFrom(1), chol.a[k.n-1][k.n-1])
	return nativeKernel{exp: e.float(), sigma: sigma.float(), chol: chol.float(), ell: ell.float()}
}

// bigMat is a square matrix of big.Float values (used only to precompute series coefficients).
type bigMat [][]*big.Float

func newBigMat(n int) bigMat {
	m := make(bigMat, n)
	for i := range m {
		m[i] = make([]*big.Float, n)
		for j := range m[i] {
			m[i][j] = new(big.Float).SetPrec(bigPrec)
		}
	}
	return m
}

func bigMatMul(a, b bigMat) bigMat {
	n := len(a)
	c := newBigMat(n)
	prod := new(big.Float).SetPrec(bigPrec)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			for k := 0; k < n; k++ {
				prod.Mul(a[i][k], b[k][j])
				c[i][j].Add(c[i][j], prod)
			}
		}
	}
	return c
}

// divide divides every entry by the integer d, in place.
func (m bigMat) divide(d int) bigMat {
	div := new(big.Float).SetPrec(bigPrec).SetInt64(int64(d))
	for i := range m {
		for j := range m[i] {
			m[i][j].Quo(m[i][j], div)
		}
	}
	return m
}

// dd rounds every entry to double-double.
func (m bigMat) dd() ddMat {
	out := ddMat{n: len(m)}
	rest := new(big.Float).SetPrec(bigPrec)
	for i := range m {
		for j := range m[i] {
			hi, _ := m[i][j].Float64()
			rest.Sub(m[i][j], new(big.Float).SetFloat64(hi))
			lo, _ := rest.Float64()
			out.a[i][j] = dd{hi, lo}
		}
	}
	return out
}
