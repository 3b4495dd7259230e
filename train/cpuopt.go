package train

import (
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/tensor"
)

// cpuOptimizer is the trainer's optimizer ops for a model trained outside Trainer on the CPU
// (ToyStep, the FID classifier): tensor.SumSq when it clips, tensor.Adam and, with an EMA,
// tensor.EMA, on the parameters' device tensors, with Adam's moments and the EMA's shadow in
// adam.M, adam.V and ema.Shadow. Its step statistics hold no loss (zero, finite), so a step is
// skipped only for a non-finite gradient norm.
type cpuOptimizer struct {
	adam                *optim.Adam
	ema                 *optim.EMA // nil: no EMA
	m, v, shadow, stats *tensor.Tensor
}

func newCPUOptimizer(adam *optim.Adam, ema *optim.EMA) *cpuOptimizer {
	o := &cpuOptimizer{adam: adam, ema: ema, m: tensor.FromSlice(adam.M, len(adam.M)), v: tensor.FromSlice(adam.V, len(adam.V)),
		stats: tensor.New(tensor.CPU, tensor.StatsLen)}
	if ema != nil {
		o.shadow = tensor.FromSlice(ema.Shadow, len(ema.Shadow))
	}
	return o
}

// step applies one Adam step with learning rate lr, the gradients clipped to the global norm
// maxNorm first (0: no clipping), then the EMA's update, to p (on the CPU).
func (o *cpuOptimizer) step(p *layers.Params, lr, maxNorm float64) error {
	if maxNorm > 0 {
		tensor.SumSq(o.stats, p.DevGrad)
	}
	a := o.adam
	tensor.Adam(p.DevData, p.DevGrad, o.m, o.v, o.stats, tensor.AdamStep{Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps, LR: lr, Step: a.Step + 1, MaxNorm: maxNorm})
	a.Step++
	if o.ema != nil {
		tensor.EMA(o.shadow, p.DevData, o.stats, o.ema.NextDecay())
		o.ema.Updates++
	}
	return tensor.Err(o.stats, p.DevData, o.shadow)
}
