package hold

import (
	"fmt"
	"holdgo/rng"
	"math"
)

// The prior is N(0, diag(v_k) ⊗ I_d) with one variance per block: 1/L for HOLD; 1 and 1/M⁻¹ for CLD's
// x and v; 1 for VP; σ_max² for VE.

// PriorVariance returns the prior variance of block k.
func (s *SDE) PriorVariance(k int) float64 { return s.priorVar[k] }

// PriorSample fills dst (batch×n·d) with prior samples.
func (s *SDE) PriorSample(dst []float64, batch int, r *rng.RNG) error {
	d, err := s.rowDims("prior sample", len(dst), batch)
	if err != nil {
		return err
	}
	for row := 0; row < len(dst); row += s.n * d {
		for k := 0; k < s.n; k++ {
			std := s.PriorStd(k)
			block := dst[row+k*d : row+(k+1)*d]
			for i := range block {
				block[i] = std * r.Normal()
			}
		}
	}
	return nil
}

// PriorLogDensity writes log p_prior(x_b) for each of the len(dst) states in x (B×n·d).
func (s *SDE) PriorLogDensity(dst, x []float64) error {
	d, err := s.rowDims("prior log-density", len(x), len(dst))
	if err != nil {
		return err
	}
	for b := range dst {
		row := x[b*s.n*d : (b+1)*s.n*d]
		var logp float64
		for k := 0; k < s.n; k++ {
			v := s.priorVar[k]
			var sq float64
			for _, xi := range row[k*d : (k+1)*d] {
				sq += xi * xi
			}
			logp -= 0.5*float64(d)*math.Log(2*math.Pi*v) + 0.5*sq/v
		}
		dst[b] = logp
	}
	return nil
}

// PriorKL returns the prior mismatch at the horizon per data dimension (nats), for data whose second
// moment per dimension is E[q0²] = secondMoment:
//
//	E_{q0} KL(N(μ_T, Σ_T) ‖ prior) = ½[tr(PΣ_T) − n − log det(PΣ_T) + secondMoment·aᵀPa],
//
// with a the q0 column of the mean map and P the prior precision. By convexity it bounds
// KL(p_T ‖ prior) for any data law with that second moment (docs/math.md#prior-and-horizon).
func (s *SDE) PriorKL(secondMoment float64) (float64, error) {
	if !(secondMoment >= 0) {
		return 0, fmt.Errorf("hold: prior KL: second moment must be ≥ 0, got %g", secondMoment)
	}
	k := s.Kernel(s.cfg.T)
	var tr, logDet, meanTerm float64
	for i := 0; i < s.n; i++ {
		p := 1 / s.priorVar[i]
		tr += p * k.Sigma.a[i][i]
		logDet += 2*math.Log(k.Chol.a[i][i]) + math.Log(p)
		a := k.Mean.a[i][0]
		meanTerm += p * a * a
	}
	return 0.5 * (tr - float64(s.n) - logDet + secondMoment*meanTerm), nil
}

// AuxEntropy returns the entropy, per data dimension, of the initial auxiliary blocks
// (p0, s0, … ~ N(0, α/L) for HOLD, v0 ~ N(0, γM) for CLD; 0 for VP and VE). The likelihood bound
// −log p(q0) ≤ −E log p_0(q0, p0, s0, …) − H subtracts it (docs/math.md#likelihood).
func (s *SDE) AuxEntropy() float64 {
	var h float64
	for k := 1; k < s.n; k++ {
		v := s.scale[k] * s.scale[k] * s.auxVar
		h += 0.5 * (1 + math.Log(2*math.Pi*v))
	}
	return h
}
