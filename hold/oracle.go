package hold

import (
	"errors"
	"fmt"
	"math"
)

// Scorer gives the last-block score ∇_{x_n} log p_t(x) (B×d, written into dst) for states x
// (B×n·d, SDE coordinates) at per-sample forward times t (B). A trained network plugs in through
// SDE.ScoreFromOutput; MixtureOracle is exact.
type Scorer interface {
	Score(dst, x []float64, t []float64) error
}

// Mixture is the data law q0 ~ Σ_k Weights[k]·N(Means[k], Stds[k]²·I_d).
type Mixture struct {
	Weights []float64
	Means   [][]float64 // K means of length d
	Stds    []float64
}

// PaperMixture returns the paper's 1-D three-component mixture (docs/math.md#test-problems):
// 0.34 N(−0.6575, 0.01²) + 0.33 N(0.2474, 0.02²) + 0.33 N(0.8002, 0.01²).
func PaperMixture() Mixture {
	return Mixture{
		Weights: []float64{0.34, 0.33, 0.33},
		Means:   [][]float64{{-0.6575}, {0.2474}, {0.8002}},
		Stds:    []float64{0.01, 0.02, 0.01},
	}
}

// PointMasses returns the empirical distribution of n points (the rows of the n × dim
// matrix points, not copied): n zero-width components of weight 1/n. Its perturbed score is
// the exact score of a finite data set, and x̂₀ a softmax-weighted average of the points.
func PointMasses(points []float64, dim int) Mixture {
	n := 0
	if dim > 0 {
		n = len(points) / dim
	}
	m := Mixture{Weights: make([]float64, n), Means: make([][]float64, n), Stds: make([]float64, n)}
	for k := range n {
		m.Weights[k] = 1 / float64(n)
		m.Means[k] = points[k*dim : (k+1)*dim : (k+1)*dim]
	}
	return m
}

// Dim returns d.
func (m Mixture) Dim() int {
	if len(m.Means) == 0 {
		return 0
	}
	return len(m.Means[0])
}

func (m Mixture) validate() error {
	if len(m.Weights) == 0 || len(m.Means) != len(m.Weights) || len(m.Stds) != len(m.Weights) {
		return fmt.Errorf("mixture needs matching non-empty weights, means and stds (got %d, %d, %d)",
			len(m.Weights), len(m.Means), len(m.Stds))
	}
	d := m.Dim()
	var total float64
	for k, w := range m.Weights {
		if !(w > 0) || len(m.Means[k]) != d || d == 0 || !(m.Stds[k] >= 0) {
			return fmt.Errorf("mixture component %d: weight %g, %d-dim mean (want %d > 0), std %g", k, w, len(m.Means[k]), d, m.Stds[k])
		}
		total += w
	}
	if math.Abs(total-1) > 1e-9 {
		return fmt.Errorf("mixture weights sum to %g, not 1", total)
	}
	return nil
}

// MixtureOracle is the exact marginal score of Gaussian-mixture data under an SDE. Given q0 the state
// is x_t ~ N(a·q0, Σ_t) per dimension (a = the q0 column of the mean map, Σ_t the marginal kernel), so
// under component k it is N(a·m_k, C_k) with C_k = Σ_t + σ_k²·a·aᵀ, independently per dimension, and
// p_t is a Gaussian mixture with the same weights. C_k's Cholesky factor is a rank-one update of the
// accurate L_t, which keeps the oracle exact at small t too.
//
// When every component is a point mass (σ_k = 0: the empirical distribution of a finite data set,
// e.g. N images) all components share Σ_t, and the oracle takes the point-mass path: with z = L_t⁻¹u
// and w = L_t⁻¹a per data dimension, the component logits are log w_k + x_k·v − ½‖w‖²‖x_k‖² with
// v_i = w·z_i (one matrix product of the batch against the N points), x̂₀ is the softmax-weighted
// average of the points and the score is −L_t⁻ᵀ(z − w x̂₀).
type MixtureOracle struct {
	sde *SDE
	mix Mixture

	points  bool      // every σ_k = 0: the point-mass path
	generic bool      // tests: force the general path
	flat    []float64 // K×d means, row-major (point-mass path)
	norms   []float64 // ‖x_k‖²
}

// NewMixtureOracle checks the mixture and binds it to the SDE.
func NewMixtureOracle(sde *SDE, mix Mixture) (*MixtureOracle, error) {
	if err := mix.validate(); err != nil {
		return nil, fmt.Errorf("hold: mixture oracle: %w", err)
	}
	o := &MixtureOracle{sde: sde, mix: mix, points: true}
	for _, sd := range mix.Stds {
		o.points = o.points && sd == 0
	}
	if o.points {
		d := mix.Dim()
		o.flat = make([]float64, 0, len(mix.Means)*d)
		o.norms = make([]float64, len(mix.Means))
		for k, mu := range mix.Means {
			o.flat = append(o.flat, mu...)
			for _, v := range mu {
				o.norms[k] += v * v
			}
		}
	}
	return o, nil
}

// Score writes the last-block score (B×d).
func (o *MixtureOracle) Score(dst, x []float64, t []float64) error {
	return o.evaluate(nil, dst, nil, x, t)
}

// FullScore writes the score with respect to every block (B×n·d).
func (o *MixtureOracle) FullScore(dst, x []float64, t []float64) error {
	return o.evaluate(dst, nil, nil, x, t)
}

// LogDensity writes log p_t(x_b) for each sample (B).
func (o *MixtureOracle) LogDensity(dst, x []float64, t []float64) error {
	return o.evaluate(nil, nil, dst, x, t)
}

// PredictX0 writes x̂₀ = E[q0 | x_t] (B×d), the data prediction the x̂₀ samplers step with: under
// component k, q0 | x_t is Gaussian with mean m_k + σ_k²·aᵀC_k⁻¹(x − a m_k), and x̂₀ is the
// posterior-weighted sum of these. For point-mass components (σ_k = 0) it is exactly a weighted sum of
// the means, whatever t.
func (o *MixtureOracle) PredictX0(dst, x []float64, t []float64) error {
	if len(dst) != len(t)*o.mix.Dim() {
		return fmt.Errorf("hold: oracle: x̂₀ destination has %d values, want %d", len(dst), len(t)*o.mix.Dim())
	}
	return o.evaluateX0(dst, x, t)
}

// evaluate computes whichever of the full score, last-block score and log-density is requested.
func (o *MixtureOracle) evaluate(full, last, logp, x []float64, t []float64) error {
	return o.eval(full, last, logp, nil, x, t)
}

func (o *MixtureOracle) evaluateX0(x0, x []float64, t []float64) error {
	return o.eval(nil, nil, nil, x0, x, t)
}

func (o *MixtureOracle) eval(full, last, logp, x0, x []float64, t []float64) error {
	n, d, batch := o.sde.n, o.mix.Dim(), len(t)
	if len(x) != batch*n*d {
		return fmt.Errorf("hold: oracle: want %d state values (B=%d, n=%d, d=%d), got %d", batch*n*d, batch, n, d, len(x))
	}
	if (full != nil && len(full) != len(x)) || (last != nil && len(last) != batch*d) || (logp != nil && len(logp) != batch) {
		return errors.New("hold: oracle: destination has the wrong length")
	}
	if o.points && !o.generic {
		return o.evalPoints(full, last, logp, x0, x, t)
	}
	comps := len(o.mix.Weights)
	factors := make([]Matrix, comps)
	logNorm := make([]float64, comps) // log w_k − d·(log det L_k + n/2·log 2π)
	logDens := make([]float64, comps)
	resid := make([][MaxBlocks]float64, comps*d) // C_k⁻¹(x − a m_k) per component and dimension
	var a [MaxBlocks]float64
	lastTime := math.NaN()
	for b, tb := range t {
		if !(tb > 0) {
			return fmt.Errorf("hold: oracle: sample %d has time %g, want t > 0", b, tb)
		}
		if tb != lastTime { // samplers evaluate whole batches at one time: factor once per time
			o.factorize(tb, &a, factors, logNorm)
			lastTime = tb
		}
		row := x[b*n*d : (b+1)*n*d]
		for c := range factors {
			var sq float64
			for i := 0; i < d; i++ {
				var r [MaxBlocks]float64
				for j := 0; j < n; j++ {
					r[j] = row[j*d+i] - a[j]*o.mix.Means[c][i]
				}
				solveLower(&factors[c], &r)
				for j := 0; j < n; j++ {
					sq += r[j] * r[j]
				}
				solveUpperT(&factors[c], &r)
				resid[c*d+i] = r
			}
			logDens[c] = logNorm[c] - 0.5*sq
		}
		maxLog := math.Inf(-1)
		for _, l := range logDens {
			maxLog = math.Max(maxLog, l)
		}
		var total float64
		for _, l := range logDens {
			total += math.Exp(l - maxLog)
		}
		if logp != nil {
			logp[b] = maxLog + math.Log(total)
		}
		if x0 != nil {
			for i := 0; i < d; i++ {
				var v float64
				for c := range factors {
					w := math.Exp(logDens[c]-maxLog) / total
					var proj float64
					for j := 0; j < n; j++ {
						proj += a[j] * resid[c*d+i][j]
					}
					v += w * (o.mix.Means[c][i] + o.mix.Stds[c]*o.mix.Stds[c]*proj)
				}
				x0[b*d+i] = v
			}
		}
		if full == nil && last == nil {
			continue
		}
		// score = −Σ_k r_k·C_k⁻¹(x − a m_k), r_k the posterior weight of component k
		for i := 0; i < d; i++ {
			var s [MaxBlocks]float64
			for c := range factors {
				w := math.Exp(logDens[c]-maxLog) / total
				for j := 0; j < n; j++ {
					s[j] -= w * resid[c*d+i][j]
				}
			}
			if full != nil {
				for j := 0; j < n; j++ {
					full[b*n*d+j*d+i] = s[j]
				}
			}
			if last != nil {
				last[b*d+i] = s[n-1]
			}
		}
	}
	return nil
}

// factorize sets a (the q0 column of the mean map at time t), the Cholesky factors of the component
// covariances C_k = Σ_t + σ_k²aaᵀ and the components' log normalisers log w_k − d·(log det L_k + n/2·log 2π).
func (o *MixtureOracle) factorize(t float64, a *[MaxBlocks]float64, factors []Matrix, logNorm []float64) {
	n, d := o.sde.n, o.mix.Dim()
	k := o.sde.Kernel(t)
	for i := 0; i < n; i++ {
		a[i] = k.Mean.a[i][0]
	}
	for c := range factors {
		var v [MaxBlocks]float64
		for i := 0; i < n; i++ {
			v[i] = o.mix.Stds[c] * a[i]
		}
		factors[c] = CholRankOneUpdate(&k.Chol, v)
		var logDet float64
		for i := 0; i < n; i++ {
			logDet += math.Log(factors[c].a[i][i])
		}
		logNorm[c] = math.Log(o.mix.Weights[c]) - float64(d)*(logDet+0.5*float64(n)*math.Log(2*math.Pi))
	}
}

// ScoreVJP writes the last-block score S (B×d) into score (may be nil) and the vector–Jacobian
// product uᵀ·∂S/∂x (B×n·d) into vjp, for cotangents u (B×d) — what the likelihood's divergence needs
// (sample.DivScorer). With g_k = −C_k⁻¹(x − a m_k) and r_k the posterior weights,
//
//	∇²log p_t = Σ_k r_k (g_k g_kᵀ − C_k⁻¹ ⊗ I_d) − ḡḡᵀ,  ḡ = ∇log p_t,
//
// and the VJP is the last-block rows of the Hessian contracted with u.
func (o *MixtureOracle) ScoreVJP(score, vjp, x, u, t []float64) error {
	n, d, batch := o.sde.n, o.mix.Dim(), len(t)
	if vjp == nil || u == nil {
		return errors.New("hold: oracle: VJP needs a cotangent and a destination")
	}
	if len(x) != batch*n*d || (score != nil && len(score) != batch*d) || len(vjp) != len(x) || len(u) != batch*d {
		return fmt.Errorf("hold: oracle: shapes x %d, score %d, vjp %d, u %d for B = %d, n = %d, d = %d", len(x), len(score), len(vjp), len(u), batch, n, d)
	}
	comps := len(o.mix.Weights)
	factors := make([]Matrix, comps)
	logNorm := make([]float64, comps)
	precRow := make([][MaxBlocks]float64, comps) // row n of C_k⁻¹
	g := make([]float64, comps*n*d)              // g_k for the current sample, block-major like x
	logp := make([]float64, comps)
	resp := make([]float64, comps)
	gbar := make([]float64, n*d)
	var a [MaxBlocks]float64
	last := math.NaN()
	for b, tb := range t {
		if !(tb > 0) {
			return fmt.Errorf("hold: oracle: sample %d has time %g, want t > 0", b, tb)
		}
		if tb != last {
			o.factorize(tb, &a, factors, logNorm)
			for c := range factors {
				var e [MaxBlocks]float64
				e[n-1] = 1
				solveLower(&factors[c], &e)
				solveUpperT(&factors[c], &e)
				precRow[c] = e
			}
			last = tb
		}
		row := x[b*n*d : (b+1)*n*d]
		for c := range factors {
			var sq float64
			gc := g[c*n*d : (c+1)*n*d]
			for i := 0; i < d; i++ {
				var r [MaxBlocks]float64
				for j := 0; j < n; j++ {
					r[j] = row[j*d+i] - a[j]*o.mix.Means[c][i]
				}
				solveLower(&factors[c], &r)
				for j := 0; j < n; j++ {
					sq += r[j] * r[j]
				}
				solveUpperT(&factors[c], &r)
				for j := 0; j < n; j++ {
					gc[j*d+i] = -r[j]
				}
			}
			logp[c] = logNorm[c] - 0.5*sq
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
		for c := range factors {
			gc := g[c*n*d : (c+1)*n*d]
			var ugc float64
			for i, ui := range ub {
				ugc += ui * gc[(n-1)*d+i]
			}
			w := resp[c]
			for j := 0; j < n; j++ {
				p := precRow[c][j]
				for i := 0; i < d; i++ {
					out[j*d+i] += w * (ugc*gc[j*d+i] - ub[i]*p)
				}
			}
		}
	}
	return nil
}

// evalPoints is eval for point-mass components (see MixtureOracle).
func (o *MixtureOracle) evalPoints(full, last, logp, x0, x []float64, t []float64) error {
	n, d, comps := o.sde.n, o.mix.Dim(), len(o.mix.Weights)
	logW := make([]float64, comps)
	for k, w := range o.mix.Weights {
		logW[k] = math.Log(w)
	}
	z := make([]float64, n*d) // L⁻¹u, block-major
	v := make([]float64, d)
	logits := make([]float64, comps)
	xhat := make([]float64, d)
	var w [MaxBlocks]float64
	var chol Matrix
	var ww, logDet float64
	lastTime := math.NaN()
	for b, tb := range t {
		if !(tb > 0) {
			return fmt.Errorf("hold: oracle: sample %d has time %g, want t > 0", b, tb)
		}
		if tb != lastTime {
			k := o.sde.Kernel(tb)
			chol = k.Chol
			for i := 0; i < n; i++ {
				w[i] = k.Mean.a[i][0]
			}
			solveLower(&chol, &w)
			ww, logDet = 0, 0
			for i := 0; i < n; i++ {
				ww += w[i] * w[i]
				logDet += math.Log(chol.a[i][i])
			}
			lastTime = tb
		}
		row := x[b*n*d : (b+1)*n*d]
		var zz float64
		for i := 0; i < d; i++ {
			var r [MaxBlocks]float64
			for j := 0; j < n; j++ {
				r[j] = row[j*d+i]
			}
			solveLower(&chol, &r)
			v[i] = 0
			for j := 0; j < n; j++ {
				z[j*d+i] = r[j]
				v[i] += w[j] * r[j]
				zz += r[j] * r[j]
			}
		}
		maxLog := math.Inf(-1)
		for k := range logits {
			mu := o.flat[k*d : (k+1)*d]
			var dot float64
			for i, m := range mu {
				dot += m * v[i]
			}
			logits[k] = logW[k] + dot - 0.5*ww*o.norms[k]
			maxLog = math.Max(maxLog, logits[k])
		}
		var total float64
		for k, l := range logits {
			logits[k] = math.Exp(l - maxLog)
			total += logits[k]
		}
		if logp != nil {
			logp[b] = maxLog + math.Log(total) - 0.5*zz - float64(d)*(logDet+0.5*float64(n)*math.Log(2*math.Pi))
		}
		if x0 == nil && full == nil && last == nil {
			continue
		}
		clear(xhat)
		for k, p := range logits {
			if p == 0 {
				continue
			}
			p /= total
			for i, m := range o.flat[k*d : (k+1)*d] {
				xhat[i] += p * m
			}
		}
		if x0 != nil {
			copy(x0[b*d:(b+1)*d], xhat)
		}
		for i := 0; i < d; i++ {
			var r [MaxBlocks]float64
			for j := 0; j < n; j++ {
				r[j] = -(z[j*d+i] - w[j]*xhat[i])
			}
			solveUpperT(&chol, &r)
			if full != nil {
				for j := 0; j < n; j++ {
					full[b*n*d+j*d+i] = r[j]
				}
			}
			if last != nil {
				last[b*d+i] = r[n-1]
			}
		}
	}
	return nil
}
