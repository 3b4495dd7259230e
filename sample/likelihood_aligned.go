package sample

import (
	"fmt"
	"math"

	"holdgo/hold"
	"holdgo/rng"
)

// The likelihood through the aligned gauge's flow (gauge.go; docs/samplers.md, "The aligned gauge").
//
// Per data dimension the state is u = J_t (c, w) with J_t = [m_t, L_t N_t]: the statistic c and the
// n−1 ancillary components w. |det J_t| = det L_t · |L_t⁻¹m_t| · |det [â, N_t]| = det L_t / σ_t, since
// [â, N_t] is orthogonal and |L_t⁻¹m_t| = √SNR_t = 1/σ_t. The aligned flow, in ς = log σ,
//
//	dc/dς = c − x̂₀(u, t(σ)),   dw/dς = 0,
//
// is an ODE in the fixed (c, w) space, so along it log p(c, w) changes by −div, with the divergence
// over c only (w does not move):
//
//	div = Σ_i ∂(c_i − x̂₀_i)/∂c_i = d − tr ∂x̂₀/∂c.
//
// With the last-block score S = rᵀm·x̂₀ − rᵀu (r the last row of Σ⁻¹, xhat.go), x̂₀ = (S + rᵀu)/rᵀm and
// ∂u/∂c = m, so tr ∂x̂₀/∂c = d + (1/rᵀm)·Σ_i Σ_k m_k ∂S_i/∂u_{k,i}, and
//
//	div = −(1/rᵀm)·tr A,   A_ji = Σ_k m_k ∂S_j/∂u_{k,i},
//
// estimated as εᵀAε from one vector–Jacobian product of S with cotangent ε (the same cost as the kernel
// gauge's estimate), or computed exactly with d of them. From u at the data's time ε₀ to T:
//
//	−log p(u_ε₀) = −log p_prior(u_T) − d·log|det J_T| − ∫ div dς + d·log|det J_ε₀|.
//
// The flow is another deterministic map than the probability-flow ODE of u (it keeps w, which that ODE
// rotates), but with exact scores both transport the same marginals, so the two bounds agree up to the
// solver's tolerance and the prior's mismatch at T; with a learned network they are two estimates of
// one model's likelihood.

// logDetJ returns log|det J_t| per data dimension: Σ_k log L_kk − log σ_t.
func (g *gauge) logDetJ(n int) float64 {
	s := -math.Log(g.sigma)
	for k := 0; k < n; k++ {
		s += math.Log(g.l[k][k])
	}
	return s
}

// nllChunkAligned is nllChunk through the aligned gauge's flow (same draws from r, same outputs).
func nllChunkAligned(sde *hold.SDE, score DivScorer, q0 []float64, d int, cfg LikelihoodConfig, r *rng.RNG, out, outAux []float64) (int, error) {
	n := sde.Blocks()
	batch := len(q0) / d
	row := n * d
	T := sde.Horizon()
	u0, auxLog, eps := nllStart(sde, q0, d, cfg, r)
	g0, err := newGauge(sde, cfg.Eps)
	if err != nil {
		return 0, fmt.Errorf("sample: NLL (aligned gauge): %w", err)
	}
	gT, err := newGauge(sde, T)
	if err != nil {
		return 0, fmt.Errorf("sample: NLL (aligned gauge): %w", err)
	}
	// State of the solve: c (batch × d), then batch accumulated divergences; w stays aside.
	y := make([]float64, batch*d+batch)
	w := make([]float64, batch*(n-1)*d)
	g0.split(y[:batch*d], w, u0[:batch*row], n, d, batch)

	times := make([]float64, batch)
	u := make([]float64, batch*row)
	sc := make([]float64, batch*d)
	vjp := make([]float64, batch*row)
	unit := make([]float64, batch*d)
	calls := 0
	f := func(s float64, y, dy []float64) error {
		sigma := math.Min(math.Max(math.Exp(s), g0.sigma), gT.sigma)
		t, err := TimeAtNoiseLevel(sde, sigma, cfg.Eps, T)
		if err != nil {
			return err
		}
		g, err := newGauge(sde, t)
		if err != nil {
			return err
		}
		rr, rm := lastRow(sde, t)
		for i := range times {
			times[i] = t
		}
		c := y[:batch*d]
		g.rebuild(u, c, w, n, d, batch)
		div := dy[batch*d:]
		evals, err := traceVJP(score, cfg.Estimator, g.m, n, d, sc, vjp, u, eps, unit, times, div)
		calls += evals
		if err != nil {
			return err
		}
		for b := 0; b < batch; b++ {
			div[b] *= -1 / rm
			for i := 0; i < d; i++ {
				var ru float64
				for k := 0; k < n; k++ {
					ru += rr[k] * u[b*row+k*d+i]
				}
				x0 := (sc[b*d+i] + ru) / rm
				dy[b*d+i] = c[b*d+i] - x0
			}
		}
		return nil
	}
	if _, err := SolveODE(f, math.Log(g0.sigma), math.Log(gT.sigma), y, ODEOptions{RTol: cfg.RTol, ATol: cfg.ATol}, nil, nil); err != nil {
		return calls, fmt.Errorf("sample: NLL (aligned gauge): %w", err)
	}
	gT.rebuild(u, y[:batch*d], w, n, d, batch)
	prior := make([]float64, batch)
	if err := sde.PriorLogDensity(prior, u); err != nil {
		return calls, err
	}
	entropy := float64(d) * sde.AuxEntropy()
	jac := float64(d) * (g0.logDetJ(n) - gT.logDetJ(n))
	for b := range out {
		joint := -(prior[b] + y[batch*d+b]) + jac // −log p_ε₀(q0, aux)
		out[b] = joint - entropy
		outAux[b] = joint + auxLog[b]
	}
	return calls, nil
}
