package restore

import (
	"fmt"

	"holdgo/hold"
)

// gauge holds the aligned-gauge quantities of one forward time, per data dimension, from
// hold.SDE.EDMPrecond (float64): u = m c + L N w, c = toCᵀu, w = toW u, and the last-block score
// S = (rᵀm)x̂₀ − rᵀu with r = Σ⁻¹e_n.
type gauge struct {
	t, sigma float64
	n        int
	m, toC   [hold.MaxBlocks]float64
	r        [hold.MaxBlocks]float64
	rm       float64                                 // rᵀm
	toW      [hold.MaxBlocks][hold.MaxBlocks]float64 // rows 0…n−2
	ln       [hold.MaxBlocks][hold.MaxBlocks]float64 // ln[i][j] = (L N)_ij, j < n−1
}

// gaugeSDE returns an SDE whose kernel is sde's and whose objective lets EDMPrecond run (the gauge
// does not depend on the objective; EDMPrecond refuses DSM because DSM's targets are not a function
// of x̂₀).
func gaugeSDE(sde *hold.SDE) (*hold.SDE, error) {
	cfg := sde.Config()
	if cfg.Objective != hold.ObjectiveDSM || sde.Blocks() == 1 {
		return sde, nil
	}
	cfg.Objective = hold.ObjectiveBCSM
	return hold.New(cfg)
}

func newGauge(sde *hold.SDE, t float64) (gauge, error) {
	p, err := sde.EDMPrecond(t, hold.EDMSigmaData)
	if err != nil {
		return gauge{}, fmt.Errorf("restore: gauge at t = %g: %w", t, err)
	}
	n := sde.Blocks()
	k := sde.Kernel(t)
	g := gauge{t: t, sigma: p.Sigma, n: n, toC: p.ToC, r: p.ScoreU, rm: p.ScoreX0}
	for i := range n {
		g.m[i] = k.Mean.At(i, 0)
	}
	for j := 0; j+1 < n; j++ {
		g.toW[j] = p.In[j+1]
		for i := range n {
			var s float64
			for q := 0; q <= i; q++ {
				s += k.Chol.At(i, q) * p.Basis[j][q]
			}
			g.ln[i][j] = s
		}
	}
	return g, nil
}

// split writes c (B×d) and w (B×(n−1)·d, block j in columns [j·d, (j+1)·d)) of the states u (B×n·d).
// As in sample's gauge it first takes out m·q̃ with q̃ = u_q/m_q (toCᵀm = 1, toW·m = 0), so that the
// large entries of toC and toW at small t never multiply u_q.
func (g *gauge) split(c, w, u []float64, d, batch int) {
	n := g.n
	var res [hold.MaxBlocks]float64
	for b := range batch {
		row := u[b*n*d : (b+1)*n*d]
		for i := range d {
			qt := row[i] / g.m[0]
			for k := 1; k < n; k++ {
				res[k] = row[k*d+i] - g.m[k]*qt
			}
			s := qt
			for k := 1; k < n; k++ {
				s += g.toC[k] * res[k]
			}
			c[b*d+i] = s
			for j := 0; j+1 < n; j++ {
				var v float64
				for k := 1; k < n; k++ {
					v += g.toW[j][k] * res[k]
				}
				w[(b*(n-1)+j)*d+i] = v
			}
		}
	}
}

// rebuild writes u = m c + L N w (B×n·d).
func (g *gauge) rebuild(u, c, w []float64, d, batch int) {
	n := g.n
	for b := range batch {
		row := u[b*n*d : (b+1)*n*d]
		for i := range d {
			for k := range n {
				s := g.m[k] * c[b*d+i]
				for j := 0; j+1 < n; j++ {
					s += g.ln[k][j] * w[(b*(n-1)+j)*d+i]
				}
				row[k*d+i] = s
			}
		}
	}
}

// shift moves the states u (B×n·d) along m_t by delta (B×d): u ← u + m_t δc, which moves c by δc and
// leaves w (toW·m = 0). This is how replacement, RePaint and DPS change a state: never q alone.
func (g *gauge) shift(u, delta []float64, d, batch int) {
	n := g.n
	for b := range batch {
		row := u[b*n*d : (b+1)*n*d]
		for k := range n {
			for i := range d {
				row[k*d+i] += g.m[k] * delta[b*d+i]
			}
		}
	}
}

// x0FromScore turns last-block scores (B×d) of the states u into x̂₀ = (S + rᵀu)/(rᵀm), in place.
func (g *gauge) x0FromScore(s, u []float64, d, batch int) {
	n := g.n
	for b := range batch {
		row := u[b*n*d : (b+1)*n*d]
		for i := range d {
			ru := 0.0
			for k := range n {
				ru += g.r[k] * row[k*d+i]
			}
			s[b*d+i] = (s[b*d+i] + ru) / g.rm
		}
	}
}

// scoreFromX0 writes S = (rᵀm)x̂₀ − rᵀu (B×d) of the states u given x̂₀.
func (g *gauge) scoreFromX0(dst, x0, u []float64, d, batch int) {
	n := g.n
	for b := range batch {
		row := u[b*n*d : (b+1)*n*d]
		for i := range d {
			ru := 0.0
			for k := range n {
				ru += g.r[k] * row[k*d+i]
			}
			dst[b*d+i] = g.rm*x0[b*d+i] - ru
		}
	}
}

// pullBack turns v = gᵀ∂S/∂u (B×n·d) and the cotangent g (B×d) into gᵀ∂x̂₀/∂c = Σ_k m_k v_k/(rᵀm) + g
// (B×d, into dst): since x̂₀ = (S + rᵀu)/(rᵀm), gᵀ∂x̂₀/∂u_k = (v_k + r_k g)/(rᵀm), and moving c by δ
// moves u by m δ, with rᵀm/(rᵀm) = 1 (restoration.md §2(b)).
func (g *gauge) pullBack(dst, v, cot []float64, d, batch int) {
	n := g.n
	for b := range batch {
		row := v[b*n*d : (b+1)*n*d]
		for i := range d {
			var s float64
			for k := range n {
				s += g.m[k] * row[k*d+i]
			}
			dst[b*d+i] = s/g.rm + cot[b*d+i]
		}
	}
}
