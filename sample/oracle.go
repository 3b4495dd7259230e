package sample

import (
	"errors"
	"fmt"
	"math"

	"holdgo/hold"
)

// DivScorer is a score that also gives vector–Jacobian products of the last-block score, which the
// likelihood's divergence needs. A network provides it through autograd (one backward pass); Oracle
// analytically.
type DivScorer interface {
	hold.Scorer
	// ScoreVJP writes the last-block score S (B×d) into score and uᵀ·∂S/∂x (B×n·d) into vjp, for
	// cotangents u (B×d), states x (B×n·d) and per-sample times t (B). score may be nil.
	ScoreVJP(score, vjp, x, u, t []float64) error
}

// Oracle is the exact score of Gaussian-mixture data under an SDE, with its vector–Jacobian product.
// Under component k the state is x_t ~ N(a·m_k, C_k) independently per data dimension, with a the q0
// column of the kernel's mean map and C_k = Σ_t + σ_k²·a·aᵀ (as hold.MixtureOracle), so
//
//	∇log p_t = Σ_k r_k g_k,  g_k = −C_k⁻¹(x − a m_k),  r_k the posterior weights,
//	∇²log p_t = Σ_k r_k (g_k g_kᵀ − C_k⁻¹ ⊗ I_d) − ḡḡᵀ,  ḡ = ∇log p_t,
//
// and the VJP is the last-block rows of the Hessian contracted with u. C_k's Cholesky factor is a
// rank-one (Givens) update of the kernel's accurate L_t, so the oracle stays exact at small t. Safe for
// concurrent use.
type Oracle struct {
	sde *hold.SDE
	mix hold.Mixture
	d   int
}

// NewOracle binds a mixture to an SDE.
func NewOracle(sde *hold.SDE, mix hold.Mixture) (*Oracle, error) {
	if _, err := hold.NewMixtureOracle(sde, mix); err != nil { // hold validates the mixture
		return nil, fmt.Errorf("sample: oracle: %w", err)
	}
	return &Oracle{sde: sde, mix: mix, d: mix.Dim()}, nil
}

// Score writes the last-block score (B×d).
func (o *Oracle) Score(dst, x, t []float64) error { return o.eval(dst, nil, x, nil, t) }

// ScoreVJP implements DivScorer.
func (o *Oracle) ScoreVJP(score, vjp, x, u, t []float64) error {
	if vjp == nil || u == nil {
		return errors.New("sample: oracle: VJP needs a cotangent and a destination")
	}
	return o.eval(score, vjp, x, u, t)
}

type componentFactor struct {
	chol    [hold.MaxBlocks][hold.MaxBlocks]float64 // lower Cholesky factor of C_k
	precRow [hold.MaxBlocks]float64                 // row n of C_k⁻¹
	logNorm float64                                 // log w_k − d·(log det L_k + n/2·log 2π)
}

func (o *Oracle) factor(t float64, a *[hold.MaxBlocks]float64, comps []componentFactor) {
	n := o.sde.Blocks()
	k := o.sde.Kernel(t)
	for i := 0; i < n; i++ {
		a[i] = k.Mean.At(i, 0)
	}
	for c := range comps {
		f := &comps[c]
		var v [hold.MaxBlocks]float64
		for i := 0; i < n; i++ {
			v[i] = o.mix.Stds[c] * a[i]
		}
		u := hold.CholRankOneUpdate(&k.Chol, v) // chol(L Lᵀ + v vᵀ) by Givens rotations
		for i := 0; i < n; i++ {
			for j := 0; j < n; j++ {
				f.chol[i][j] = u.At(i, j)
			}
		}
		var e [hold.MaxBlocks]float64
		e[n-1] = 1
		f.precRow = cholSolve(&f.chol, n, e)
		var logDet float64
		for i := 0; i < n; i++ {
			logDet += math.Log(f.chol[i][i])
		}
		f.logNorm = math.Log(o.mix.Weights[c]) - float64(o.d)*(logDet+0.5*float64(n)*math.Log(2*math.Pi))
	}
}

// cholSolve solves L Lᵀ w = r.
func cholSolve(l *[hold.MaxBlocks][hold.MaxBlocks]float64, n int, r [hold.MaxBlocks]float64) [hold.MaxBlocks]float64 {
	return backSolve(l, n, forwardSolve(l, n, r))
}

// forwardSolve solves L w = r.
func forwardSolve(l *[hold.MaxBlocks][hold.MaxBlocks]float64, n int, r [hold.MaxBlocks]float64) [hold.MaxBlocks]float64 {
	for i := 0; i < n; i++ {
		s := r[i]
		for k := 0; k < i; k++ {
			s -= l[i][k] * r[k]
		}
		r[i] = s / l[i][i]
	}
	return r
}

// backSolve solves Lᵀ w = r.
func backSolve(l *[hold.MaxBlocks][hold.MaxBlocks]float64, n int, r [hold.MaxBlocks]float64) [hold.MaxBlocks]float64 {
	for i := n - 1; i >= 0; i-- {
		s := r[i]
		for k := i + 1; k < n; k++ {
			s -= l[k][i] * r[k]
		}
		r[i] = s / l[i][i]
	}
	return r
}

func (o *Oracle) eval(score, vjp, x, u, t []float64) error {
	n, d, batch := o.sde.Blocks(), o.d, len(t)
	if len(x) != batch*n*d || (score != nil && len(score) != batch*d) || (vjp != nil && (len(vjp) != len(x) || len(u) != batch*d)) {
		return fmt.Errorf("sample: oracle: shapes x %d, score %d, vjp %d, u %d for B = %d, n = %d, d = %d", len(x), len(score), len(vjp), len(u), batch, n, d)
	}
	comps := len(o.mix.Weights)
	fac := make([]componentFactor, comps)
	g := make([]float64, comps*n*d) // g_k for the current sample, block-major like x
	logp := make([]float64, comps)
	resp := make([]float64, comps)
	gbar := make([]float64, n*d)
	var a [hold.MaxBlocks]float64
	last := math.NaN()
	for b, tb := range t {
		if !(tb > 0) {
			return fmt.Errorf("sample: oracle: sample %d has time %g, want t > 0", b, tb)
		}
		if tb != last {
			o.factor(tb, &a, fac)
			last = tb
		}
		row := x[b*n*d : (b+1)*n*d]
		for c := range fac {
			var sq float64
			gc := g[c*n*d : (c+1)*n*d]
			for i := 0; i < d; i++ {
				var r [hold.MaxBlocks]float64
				for j := 0; j < n; j++ {
					r[j] = row[j*d+i] - a[j]*o.mix.Means[c][i]
				}
				z := forwardSolve(&fac[c].chol, n, r)
				for j := 0; j < n; j++ {
					sq += z[j] * z[j]
				}
				w := backSolve(&fac[c].chol, n, z)
				for j := 0; j < n; j++ {
					gc[j*d+i] = -w[j]
				}
			}
			logp[c] = fac[c].logNorm - 0.5*sq
		}
		maxLog := math.Inf(-1)
		for _, l := range logp {
			maxLog = math.Max(maxLog, l)
		}
		var total float64
		for c, l := range logp {
			resp[c] = math.Exp(l - maxLog)
			total += resp[c]
		}
		clear(gbar)
		for c := range resp {
			resp[c] /= total
			for i, v := range g[c*n*d : (c+1)*n*d] {
				gbar[i] += resp[c] * v
			}
		}
		if score != nil {
			copy(score[b*d:(b+1)*d], gbar[(n-1)*d:])
		}
		if vjp == nil {
			continue
		}
		// vjp_{(j,i')} = Σ_k r_k[(u·g_k,n) g_k,(j,i') − u_{i'}(C_k⁻¹)_{n,j}] − (u·ḡ_n) ḡ_(j,i')
		ub := u[b*d : (b+1)*d]
		out := vjp[b*n*d : (b+1)*n*d]
		var ug float64
		for i, ui := range ub {
			ug += ui * gbar[(n-1)*d+i]
		}
		for i := range out {
			out[i] = -ug * gbar[i]
		}
		for c := range fac {
			gc := g[c*n*d : (c+1)*n*d]
			var ugc float64
			for i, ui := range ub {
				ugc += ui * gc[(n-1)*d+i]
			}
			w := resp[c]
			for j := 0; j < n; j++ {
				p := fac[c].precRow[j]
				for i := 0; i < d; i++ {
					out[j*d+i] += w * (ugc*gc[j*d+i] - ub[i]*p)
				}
			}
		}
	}
	return nil
}
