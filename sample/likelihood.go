package sample

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"holdgo/hold"
	"holdgo/internal/parallel"
	"holdgo/rng"
)

// Trace estimators for the divergence of the probability-flow drift.
const (
	// EstimatorRademacher is Hutchinson's estimator with ε ∈ {±1}^d, drawn once per point and kept fixed
	// over the solve (CLD-SGM's default).
	EstimatorRademacher = "rademacher"
	// EstimatorGaussian is Hutchinson's estimator with ε ~ N(0, I).
	EstimatorGaussian = "gaussian"
	// EstimatorExact computes the trace with d vector–Jacobian products per evaluation.
	EstimatorExact = "exact"
)

// Bits-per-dimension offsets: 8-bit data dequantised to (k + U)/256 and then scaled to [−1, 1] (as
// CLD-SGM and score_sde) has bpd = nats/(D·ln 2) + 7; unscaled [0, 1] data + 8 (docs/math.md#likelihood).
const (
	OffsetCentered8Bit = 7.0
	OffsetUnit8Bit     = 8.0
)

// LikelihoodConfig controls NLL.
type LikelihoodConfig struct {
	Eps        float64 // start time of the ODE (the data's time); 0 means 1e-5 (CLD-SGM's likelihood_eps)
	RTol, ATol float64 // 0 means DefaultTol
	Estimator  string  // EstimatorRademacher (default ""), EstimatorGaussian or EstimatorExact
	OffsetBits float64 // added to bits/dim: OffsetCentered8Bit for dequantised 8-bit images, 0 for continuous data
	MaxBatch   int     // points per ODE solve (one shared step size per solve); 0 means DefaultMaxBatch
	Workers    int     // concurrent solves (the DivScorer must then be safe for concurrent use)
	// Gauge is the deterministic flow integrated: GaugeKernel (default "") the probability-flow ODE of
	// the state, GaugeAligned the aligned gauge's flow of the sufficient statistic (likelihood_aligned.go).
	Gauge string
	// Clip > 0 integrates the flow of the clipped denoiser (x̂₀ thresholded to [−Clip, Clip];
	// ClippedScorer, its VJP included): the likelihood of the model the samplers' --clip draws from.
	// 0 integrates the network's own flow.
	Clip float64
}

// The flows NLL can integrate.
const (
	GaugeKernel  = "kernel"
	GaugeAligned = "aligned"
)

// Stat is a mean with its standard error over the evaluated points.
type Stat struct{ Mean, SE float64 }

func (s Stat) String() string { return fmt.Sprintf("%.4f ± %.4f", s.Mean, s.SE) }

// NLLResult is the negative log-likelihood bound of a set of points.
type NLLResult struct {
	PerPoint   []float64 // nats per point (all d dimensions), entropy correction included
	NatsPerDim Stat
	BitsPerDim Stat
	// PerPointAux is the same bound with the entropy H replaced by −log N(aux) of the auxiliary values
	// actually drawn. It has the same expectation (E[−log N(aux)] = H) and, for a model close to the
	// data, far smaller variance: at t → 0 the joint density factorises as p(q0)·N(aux), so the aux
	// term cancels point by point. NatsPerDimAux and BitsPerDimAux summarise it.
	PerPointAux   []float64
	NatsPerDimAux Stat
	BitsPerDimAux Stat
	NFE           int // score-and-VJP evaluations per solve (the largest over chunks)
}

// BitsPerDim converts nats per dimension to bits per dimension with the given offset.
func BitsPerDim(natsPerDim, offsetBits float64) float64 { return natsPerDim/math.Ln2 + offsetBits }

// Dequantize maps 8-bit values k to (k + U)/256 with U ~ U[0, 1), then to [−1, 1] (2x − 1): uniform
// dequantisation as score_sde and CLD-SGM evaluate likelihoods; use OffsetCentered8Bit.
func Dequantize(dst []float64, levels []uint8, r *rng.RNG) error {
	if len(dst) != len(levels) {
		return fmt.Errorf("sample: dequantize: %d destinations for %d values", len(dst), len(levels))
	}
	for i, k := range levels {
		dst[i] = 2*(float64(k)+r.Float64())/256 - 1
	}
	return nil
}

// NLL returns the upper bound on −log p(q0) for each point of data (B×d) through the probability-flow
// ODE (docs/math.md#likelihood):
//
//  1. the auxiliary blocks start as p0, s0, … ~ N(0, α·v_k) (v_k the block's prior variance, so α/L for
//     HOLD and γM for CLD) and the state u0 = (q0, p0, s0) is placed at time Eps;
//  2. the forward-time ODE du/dt = f(u, t) − ½g²S(u, t)·e_n and d(Δ)/dt = div(u, t) are solved together to
//     T with SolveODE (one state vector per chunk: shared steps, as CLD-SGM);
//  3. −log p(q0) ≤ −(log p_prior(u_T) + Δ) − H(p0, s0, …), with H = d·hold.SDE.AuxEntropy()
//     (d/2·(1 + log 2πα/L) per auxiliary block for HOLD).
//
// The divergence is β·tr(F)·d for the linear drift, exactly, plus −½g²·tr(∂S/∂x_n) for the score,
// estimated as εᵀ(∂S/∂x_n)ε with one VJP (Rademacher or Gaussian ε, fixed per point over the solve) or
// computed exactly. Only the last block's ε is needed, because only the last block carries the score.
func NLL(sde *hold.SDE, score DivScorer, data []float64, d int, cfg LikelihoodConfig, seed uint64) (*NLLResult, error) {
	if sde == nil || score == nil {
		return nil, errors.New("sample: NLL needs an SDE and a score")
	}
	if d < 1 || len(data) == 0 || len(data)%d != 0 {
		return nil, fmt.Errorf("sample: NLL: %d data values do not form points of dimension %d", len(data), d)
	}
	if cfg.Eps == 0 {
		cfg.Eps = 1e-5
	}
	if !(cfg.Eps > 0 && cfg.Eps < sde.Horizon()) {
		return nil, fmt.Errorf("sample: NLL: start time %g outside (0, T = %g)", cfg.Eps, sde.Horizon())
	}
	switch cfg.Estimator {
	case "":
		cfg.Estimator = EstimatorRademacher
	case EstimatorRademacher, EstimatorGaussian, EstimatorExact:
	default:
		return nil, fmt.Errorf("sample: NLL: unknown estimator %q (want rademacher, gaussian or exact)", cfg.Estimator)
	}
	if cfg.Clip != 0 {
		cs, err := NewClippedScorer(sde, score, cfg.Clip)
		if err != nil {
			return nil, fmt.Errorf("sample: NLL: %w", err)
		}
		score = cs
	}
	chunk := nllChunk
	switch cfg.Gauge {
	case "", GaugeKernel:
	case GaugeAligned:
		chunk = nllChunkAligned
	default:
		return nil, fmt.Errorf("sample: NLL: unknown gauge %q (want kernel or aligned)", cfg.Gauge)
	}
	maxBatch := cfg.MaxBatch
	if maxBatch <= 0 {
		maxBatch = DefaultMaxBatch
	}
	points := len(data) / d
	chunks := (points + maxBatch - 1) / maxBatch
	res := &NLLResult{PerPoint: make([]float64, points), PerPointAux: make([]float64, points)}
	nfe := make([]int, chunks)
	errs := make([]error, chunks)
	work := func(c int) {
		lo, hi := c*maxBatch, min(points, (c+1)*maxBatch)
		nfe[c], errs[c] = chunk(sde, score, data[lo*d:hi*d], d, cfg, rng.New(ChunkSeed(seed, c)), res.PerPoint[lo:hi], res.PerPointAux[lo:hi])
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, cfg.Workers))
	for c := range chunks {
		sem <- struct{}{}
		parallel.Go(&wg, func() {
			work(c)
			<-sem
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, v := range nfe {
		res.NFE = max(res.NFE, v)
	}
	summarise := func(perPoint []float64) (nats, bits Stat) {
		perDim := make([]float64, points)
		for i, v := range perPoint {
			perDim[i] = v / float64(d)
		}
		nats = MeanSE(perDim)
		return nats, Stat{Mean: BitsPerDim(nats.Mean, cfg.OffsetBits), SE: nats.SE / math.Ln2}
	}
	res.NatsPerDim, res.BitsPerDim = summarise(res.PerPoint)
	res.NatsPerDimAux, res.BitsPerDimAux = summarise(res.PerPointAux)
	return res, nil
}

// MeanSE returns the mean and its standard error (sample standard deviation / √N; 0 for N = 1).
func MeanSE(v []float64) Stat {
	var mean float64
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return Stat{Mean: mean}
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return Stat{Mean: mean, SE: math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))}
}

// traceVJP writes per sample b into div the trace tr(Σ_k w_k ∂S/∂u_k) of the score S's Jacobian along
// the blocks weighted by w (the last block alone for the probability-flow ODE of u; m_t for the aligned
// gauge): Hutchinson's εᵀ(·)ε from one vector–Jacobian product, or exactly with d of them (cotangents in
// unit). It returns the products evaluated.
func traceVJP(score DivScorer, estimator string, w vecN, n, d int, sc, vjp, x, eps, unit, times, div []float64) (int, error) {
	batch, row := len(div), n*d
	// project adds Σ_i v_i Σ_k w_k vjp[b, k, i] to div[b].
	project := func(v []float64) {
		for b := 0; b < batch; b++ {
			var est float64
			for i := 0; i < d; i++ {
				if v[b*d+i] == 0 {
					continue
				}
				var s float64
				for k := 0; k < n; k++ {
					if w[k] != 0 {
						s += w[k] * vjp[b*row+k*d+i]
					}
				}
				est += v[b*d+i] * s
			}
			div[b] += est
		}
	}
	clear(div)
	if estimator != EstimatorExact {
		if err := score.ScoreVJP(sc, vjp, x, eps, times); err != nil {
			return 1, err
		}
		project(eps)
		return 1, nil
	}
	for i := 0; i < d; i++ {
		clear(unit)
		for b := 0; b < batch; b++ {
			unit[b*d+i] = 1
		}
		if err := score.ScoreVJP(sc, vjp, x, unit, times); err != nil {
			return i + 1, err
		}
		project(unit)
	}
	return d, nil
}

// traceF returns tr(F) of the SDE's linear drift per unit rate (the same in any coordinates).
func traceF(sde *hold.SDE) (float64, error) {
	n := sde.Blocks()
	t := sde.Horizon()
	x := make([]float64, n*n)
	for k := 0; k < n; k++ {
		x[k*n+k] = 1
	}
	dst := make([]float64, n*n)
	times := make([]float64, n)
	for i := range times {
		times[i] = t
	}
	if err := sde.ForwardDrift(dst, x, times); err != nil {
		return 0, err
	}
	var tr float64
	for k := 0; k < n; k++ {
		tr += dst[k*n+k]
	}
	return tr / sde.Rate(t), nil
}

// nllStart draws what both gauges' solves start from: the states u0 = (q0, p0, s0, …) at the data's
// time (batch rows of n·d, followed by batch zeros for the accumulated divergences), log N(aux) of the
// auxiliary values drawn, and the estimator's ε (batch × d; unused by the exact trace).
func nllStart(sde *hold.SDE, q0 []float64, d int, cfg LikelihoodConfig, r *rng.RNG) (y, auxLog, eps []float64) {
	n := sde.Blocks()
	batch := len(q0) / d
	row := n * d
	y = make([]float64, batch*row+batch)
	alpha := sde.Config().Alpha
	auxLog = make([]float64, batch) // log N(aux; 0, α·v_k)
	for b := 0; b < batch; b++ {
		copy(y[b*row:b*row+d], q0[b*d:(b+1)*d])
		for k := 1; k < n; k++ {
			v := alpha * sde.PriorVariance(k)
			for i := 0; i < d; i++ {
				z := r.Normal()
				y[b*row+k*d+i] = math.Sqrt(v) * z
				auxLog[b] -= 0.5*z*z + 0.5*math.Log(2*math.Pi*v)
			}
		}
	}
	eps = make([]float64, batch*d)
	for i := range eps {
		switch cfg.Estimator {
		case EstimatorRademacher:
			eps[i] = 1
			if r.Float64() < 0.5 {
				eps[i] = -1
			}
		case EstimatorGaussian:
			eps[i] = r.Normal()
		}
	}
	return y, auxLog, eps
}

func nllChunk(sde *hold.SDE, score DivScorer, q0 []float64, d int, cfg LikelihoodConfig, r *rng.RNG, out, outAux []float64) (int, error) {
	n := sde.Blocks()
	batch := len(q0) / d
	row := n * d
	trF, err := traceF(sde)
	if err != nil {
		return 0, err
	}
	// State: batch rows of n·d, then batch accumulated divergences.
	y, auxLog, eps := nllStart(sde, q0, d, cfg, r)
	times := make([]float64, batch)
	sc := make([]float64, batch*d)
	vjp := make([]float64, batch*row)
	unit := make([]float64, batch*d)
	calls := 0
	f := func(t float64, y, dy []float64) error {
		x := y[:batch*row]
		for i := range times {
			times[i] = t
		}
		div := dy[batch*row:]
		var last vecN
		last[n-1] = 1 // only the last block carries the score
		evals, err := traceVJP(score, cfg.Estimator, last, n, d, sc, vjp, x, eps, unit, times, div)
		calls += evals
		if err != nil {
			return err
		}
		// dx/dt = −(reverse-time PF drift); div = β·trF·d − ½g²·tr(∂S/∂x_n)
		if err := sde.ProbabilityFlowDrift(dy[:batch*row], x, sc, times); err != nil {
			return err
		}
		for i := range dy[:batch*row] {
			dy[i] = -dy[i]
		}
		g := sde.Diffusion(t)
		lin := sde.Rate(t) * trF * float64(d)
		for b := range div {
			div[b] = lin - 0.5*g*g*div[b]
		}
		return nil
	}
	if _, err := SolveODE(f, cfg.Eps, sde.Horizon(), y, ODEOptions{RTol: cfg.RTol, ATol: cfg.ATol}, nil, nil); err != nil {
		return calls, fmt.Errorf("sample: NLL: %w", err)
	}
	prior := make([]float64, batch)
	if err := sde.PriorLogDensity(prior, y[:batch*row]); err != nil {
		return calls, err
	}
	entropy := float64(d) * sde.AuxEntropy()
	for b := range out {
		joint := -(prior[b] + y[batch*row+b]) // −log p_eps(q0, aux)
		out[b] = joint - entropy
		outAux[b] = joint + auxLog[b]
	}
	return calls, nil
}
