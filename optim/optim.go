// Package optim holds the optimizer's state and schedules over a model's flat
// parameter buffer: Adam's settings, moments and step count, the learning
// rate's warm-up and decay, and the EMA of the weights with its decay
// schedule. The updates themselves are ops of the device the parameters live
// on (tensor.SumSq, tensor.Adam with its global-norm clipping, tensor.EMA):
// one Adam per device, the CPU's on internal/vec's SIMD kernels, plus the
// Reference device's plain loop.
package optim

import "math"

// Adam is PyTorch's Adam (no weight decay, no amsgrad) over one flat buffer:
// its settings and state; tensor.Adam applies a step (with Step+1) on the
// parameters' device.
type Adam struct {
	Beta1, Beta2, Eps float64
	M, V              []float32 // first and second moments
	Step              int       // updates done
}

// NewAdam returns Adam with β = (0.9, 0.999), eps 1e-8 for n parameters.
func NewAdam(n int) *Adam {
	return &Adam{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, M: make([]float32, n), V: make([]float32, n)}
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
// score_sde/CLD-SGM ema.py): its schedule and count; tensor.EMA applies an
// update with NextDecay on the parameters' device.
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
