// Package optim holds the training utilities that act on a model's flat
// parameter and gradient buffers: Adam, global-norm clipping, linear
// warm-up and the EMA of the weights.
package optim

import (
	"math"

	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// Adam is PyTorch's Adam (no weight decay, no amsgrad) over one flat buffer.
type Adam struct {
	Beta1, Beta2, Eps float64
	M, V              []float32 // first and second moments
	Step              int       // updates done
}

// NewAdam returns Adam with β = (0.9, 0.999), eps 1e-8 for n parameters.
func NewAdam(n int) *Adam {
	return &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, M: make([]float32, n), V: make([]float32, n)}
}

// Update applies one step with learning rate lr to params given grads.
func (a *Adam) Update(params, grads []float32, lr float64) {
	if len(params) != len(a.M) || len(grads) != len(a.M) {
		panic("optim: Adam buffers and parameters differ in length")
	}
	a.Step++
	bc1 := 1 - math.Pow(a.Beta1, float64(a.Step))
	bc2 := 1 - math.Pow(a.Beta2, float64(a.Step))
	b1, b2 := float32(a.Beta1), float32(a.Beta2)
	stepSize := float32(lr / bc1)
	sqrtBC2 := float32(math.Sqrt(bc2))
	eps := float32(a.Eps)
	m, v := a.M, a.V
	// Per element, in float32: m = b1·m + (1−b1)·g; v = b2·v + (1−b2)·g²;
	// p −= stepSize·m / (√v/√bc2 + eps) (SIMD kernel, same operation order).
	parallel.For(len(params), 1<<14, func(lo, hi int) {
		vec.Adam(params[lo:hi], grads[lo:hi], m[lo:hi], v[lo:hi], b1, b2, stepSize, sqrtBC2, eps)
	})
}

// ClipGradNorm scales grads so that their global L2 norm is at most maxNorm
// (as torch.nn.utils.clip_grad_norm_, which adds 1e-6 to the norm) and
// returns the norm before clipping. maxNorm ≤ 0 only measures.
func ClipGradNorm(grads []float32, maxNorm float64) float64 {
	norm := math.Sqrt(vec.SumSquares(grads))
	if maxNorm > 0 {
		if c := maxNorm / (norm + 1e-6); c < 1 {
			vec.Scale(grads, grads, float32(c))
		}
	}
	return norm
}

// WarmupLR is the learning rate at step (0-based) under linear warm-up over
// warmup steps: lr·min(step/warmup, 1), as CLD-SGM. warmup ≤ 0 disables it.
func WarmupLR(lr float64, step, warmup int) float64 {
	if warmup <= 0 {
		return lr
	}
	return lr * min(float64(step)/float64(warmup), 1)
}

// Learning-rate decay schedules after warm-up (ScheduledLR).
const (
	DecayNone   = "none"
	DecayCosine = "cosine"
)

// ScheduledLR is the learning rate at step (0-based) of a run of steps
// steps: WarmupLR, then for DecayCosine multiplied by
// ½(1 + cos(π·step/steps)), which falls from 1 at the first step to 0 at
// the last (SGDR's cosine annealing without restarts, Loshchilov & Hutter
// 2017). DecayNone or "" keeps the rate constant.
func ScheduledLR(lr float64, step, warmup, steps int, decay string) float64 {
	lr = WarmupLR(lr, step, warmup)
	if decay == DecayCosine && steps > 0 {
		lr *= 0.5 * (1 + math.Cos(math.Pi*min(float64(step)/float64(steps), 1)))
	}
	return lr
}

// EMA is an exponential moving average of the weights with the decay
// min(Rate, (1+n)/(10+n)), n the number of updates counted first (as the
// score_sde/CLD-SGM ema.py).
type EMA struct {
	Rate    float64
	Shadow  []float32
	Updates int
}

// NewEMA starts the average at the current parameters.
func NewEMA(rate float64, params []float32) *EMA {
	return &EMA{Rate: rate, Shadow: append([]float32(nil), params...)}
}

// NextDecay is the decay of the next update, min(Rate, (1+n)/(10+n)) with n
// the updates done after it.
func (e *EMA) NextDecay() float64 {
	n := float64(e.Updates + 1)
	return min(e.Rate, (1+n)/(10+n))
}

// Update moves the shadow towards params: shadow −= (1−decay)(shadow − θ).
func (e *EMA) Update(params []float32) {
	decay := e.NextDecay()
	e.Updates++
	k := float32(1 - decay)
	s := e.Shadow
	parallel.For(len(s), 1<<14, func(lo, hi int) { vec.EMA(s[lo:hi], params[lo:hi], k) })
}
