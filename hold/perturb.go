package hold

import (
	"fmt"
	"math"

	"holdgo/internal/parallel"
	"holdgo/internal/vec"
	"holdgo/rng"
)

// Training: reparameterisation, objective and the score a trained network gives.
//
// Sign convention (the paper's, hold-paper eq. for BCSM; also score_sde's ‖s·σ + z‖²): the network
// output E_θ(x_t, t) is trained with ‖ε_last + E_θ‖², i.e. it regresses the target −ε_last, and the
// score is ∇_{x_n} log p_t ≈ ℓ_t·E_θ (given x_0 the true last-block score is −ℓ_t·ε_last). The weighting
// λ(t) = ℓ_t⁻² makes this equal to score matching: ℓ_t⁻²‖ℓ_tE_θ − (−ℓ_tε_last)‖².

// Batch holds the inputs and outputs of Perturb for B samples of d data dimensions and n blocks.
type Batch struct {
	Data  []float32 // B×d: q0
	Times []float64 // B: per-sample times t
	Noise []float32 // B×n·d: ε ~ N(0, I)
	// Aux (DSM only; nil otherwise) is B×(n−1)·d standard normal noise for the initial auxiliary blocks,
	// which start at √(α/L)·Aux (HOLD) in SDE coordinates.
	Aux []float32

	State  []float32 // out, B×n·d: x_t = μ_t + L_t ε
	Target []float32 // out, B×d: −ε_last, the regression target of the network output
}

// Perturb is the fused reparameterisation kernel: for every sample it evaluates the objective's kernel
// at t in float64 (ObjectiveKernel), then streams once over the sample's d dimensions writing
// x_t = Mean·x_0 + Chol·ε (vec.Mix: SIMD, float64 fused multiply-adds) and the target. All arithmetic
// is float64; only the stored values are float32.
// It is the CPU reference of the fused CUDA kernel.
func (s *SDE) Perturb(b Batch) error {
	batch := len(b.Times)
	n := s.n
	if batch == 0 {
		return nil
	}
	if len(b.Data)%batch != 0 {
		return fmt.Errorf("hold: perturb: %d data values for %d times", len(b.Data), batch)
	}
	d := len(b.Data) / batch
	if len(b.Noise) != batch*n*d || len(b.State) != batch*n*d || len(b.Target) != batch*d {
		return fmt.Errorf("hold: perturb: want noise and state of length %d and target %d (B=%d, n=%d, d=%d), got %d, %d, %d",
			batch*n*d, batch*d, batch, n, d, len(b.Noise), len(b.State), len(b.Target))
	}
	dsm := s.cfg.Objective == ObjectiveDSM && n > 1
	if dsm && len(b.Aux) != batch*(n-1)*d {
		return fmt.Errorf("hold: perturb: DSM needs %d auxiliary noise values, got %d", batch*(n-1)*d, len(b.Aux))
	}
	for i, t := range b.Times {
		if !(t > 0) || math.IsInf(t, 0) {
			return fmt.Errorf("hold: perturb: sample %d has time %g, want t > 0", i, t)
		}
	}

	// Samples are independent: split them over the worker pool (each writes
	// its own rows, so the result does not depend on the thread count). A
	// sample costs one kernel evaluation (≈0.6 µs for HOLD-3, ≈12 µs for
	// HOLD-4), then one pass of vec.Mix over its d dimensions: the rows
	// x_t[r] = Σ_j Mean[r][j]·x0[j] + Σ_{j≤r} Chol[r][j]·ε[j], with float64
	// fused multiply-adds, rounded once to float32.
	parallel.For(batch, max(1, 4096/(n*n*d+64)), func(lo, hi int) {
		var coef [vec.MaxMixRows * vec.MaxMixInputs]float64
		var in [vec.MaxMixInputs][]float32
		var out [vec.MaxMixRows][]float32
		for bi := lo; bi < hi; bi++ {
			mean, chol := s.PerturbMaps(b.Times[bi])
			// Inputs: q0, the auxiliary blocks' noise (DSM), then ε.
			nin := 0
			in[nin] = b.Data[bi*d : (bi+1)*d]
			nin++
			if dsm {
				for j := 1; j < n; j++ {
					in[nin] = b.Aux[(bi*(n-1)+j-1)*d : (bi*(n-1)+j)*d]
					nin++
				}
			}
			noise := b.Noise[bi*n*d : (bi+1)*n*d]
			for j := 0; j < n; j++ {
				in[nin] = noise[j*d : (j+1)*d]
				nin++
			}
			for r := 0; r < n; r++ {
				c := coef[r*nin : (r+1)*nin]
				c[0] = mean[r][0]
				m := 1
				if dsm {
					for j := 1; j < n; j++ {
						c[m] = mean[r][j]
						m++
					}
				}
				for j := 0; j < n; j++ {
					c[m+j] = chol[r][j]
				}
				out[r] = b.State[(bi*n+r)*d : (bi*n+r+1)*d]
			}
			vec.Mix(out[:n], coef[:n*nin], in[:nin])
			vec.Scale(b.Target[bi*d:(bi+1)*d], noise[(n-1)*d:], -1)
		}
	})
	return nil
}

// SampleTimes fills dst with t ~ U[t_min, T] in float64.
func (s *SDE) SampleTimes(dst []float64, r *rng.RNG) {
	for i := range dst {
		dst[i] = s.cfg.TMin + (s.cfg.T-s.cfg.TMin)*r.Float64()
	}
}

// Loss returns the noise-prediction loss (1/B)·Σ_b Σ_i (out − target)² (CLD-SGM's reduction: sum over
// dimensions, mean over the batch), accumulated in float64, and writes dLoss/dout into grad (skipped when
// grad is nil). out, target and grad are B×d.
func Loss(grad, out, target []float32, batch int) (float64, error) {
	if len(out) != len(target) || (grad != nil && len(grad) != len(out)) {
		return 0, fmt.Errorf("hold: loss: lengths differ: out %d, target %d, grad %d", len(out), len(target), len(grad))
	}
	if batch <= 0 || len(out)%batch != 0 {
		return 0, fmt.Errorf("hold: loss: %d values do not split into %d samples", len(out), batch)
	}
	return ShardLoss(grad, out, target, batch)
}

// ShardLoss is Loss on a shard of a larger batch (one data-parallel rank's
// samples): out and target hold some of the batch's samples, and the loss
// and gradient are divided by the whole batch's size, so that the shards'
// losses and gradients add up to the whole batch's (each gradient element
// is the one Loss gives for the whole batch, bit for bit).
func ShardLoss(grad, out, target []float32, batch int) (float64, error) {
	if len(out) != len(target) || (grad != nil && len(grad) != len(out)) {
		return 0, fmt.Errorf("hold: loss: lengths differ: out %d, target %d, grad %d", len(out), len(target), len(grad))
	}
	if batch <= 0 {
		return 0, fmt.Errorf("hold: loss: batch %d", batch)
	}
	inv := 1 / float64(batch)
	var sum float64
	for i, o := range out {
		diff := float64(o) - float64(target[i])
		sum += diff * diff
		if grad != nil {
			grad[i] = float32(2 * diff * inv)
		}
	}
	return sum * inv, nil
}

// ScoreFromOutput turns network outputs E (B×d) into last-block scores, dst = ℓ_t·E, with ℓ_t of the
// configured objective at each sample's time.
func (s *SDE) ScoreFromOutput(dst []float64, out []float32, t []float64) error {
	if len(t) == 0 {
		return nil
	}
	if len(out) != len(dst) || len(out)%len(t) != 0 {
		return fmt.Errorf("hold: score from output: %d outputs, %d destinations, %d times", len(out), len(dst), len(t))
	}
	d := len(out) / len(t)
	var ell float64
	for bi, tb := range t {
		if bi == 0 || tb != t[bi-1] { // samplers pass one time for the whole batch
			ell = s.Ell(tb)
		}
		for i := bi * d; i < (bi+1)*d; i++ {
			dst[i] = ell * float64(out[i])
		}
	}
	return nil
}
