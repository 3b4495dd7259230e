package train

import (
	"fmt"

	"holdgo/autograd"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// Preconditioning of the network (RunConfig.Precond).
const (
	// PrecondNone is the native parameterisation: the network predicts the last block's noise and the
	// score is ℓ_t times its output (hold.SDE.ScoreFromOutput).
	PrecondNone = "none"
	// PrecondEDM is EDM's preconditioning through the aligned gauge (hold.Precond): the network sees
	// (c_in·c, w), predicts x̂₀ = c_skip·c + c_out·F, trains on EDM's λ-weighted loss ‖F − F*‖², and
	// the score is derived exactly from x̂₀.
	PrecondEDM = "edm"
)

// checkPrecond validates a RunConfig.Precond value.
func checkPrecond(p string, objective string, blocks int) error {
	switch p {
	case "", PrecondNone:
		return nil
	case PrecondEDM:
		if objective == hold.ObjectiveDSM && blocks > 1 {
			return fmt.Errorf("precond %s needs an objective that conditions on q0 only (bcsm, hsm): DSM's targets are not a function of x̂₀", p)
		}
		return nil
	}
	return fmt.Errorf("precond must be %s or %s, got %q", PrecondNone, PrecondEDM, p)
}

// ShardEDMLoss is ShardScoreLoss for an EDM-preconditioned network (hold.Precond). Per sample it draws
// q0, t and ε exactly as ShardScoreLoss does (the same streams and elements), forms the network input
// (c_in·c, w) and the target F* = (q0 − c_skip·c)/c_out from q0 and ε in float64 without forming the
// state (hold.Precond.Draw), and records ‖F − F*‖² summed over dimensions and averaged over the global
// batch: EDM's λ(σ)‖x̂₀ − q0‖². The input and target are formed on the host and go to the step's
// device in one copy each (none on the CPU), where tensor.ScoreLoss records the loss.
func ShardEDMLoss(sde *hold.SDE, net layers.ScoreNet, data DataFunc, shard Shard, dim int, times TimeSampling) (LossFunc, error) {
	if shard.Global < 1 || shard.Len < 1 || shard.First < 0 || shard.First+shard.Len > shard.Global {
		return nil, fmt.Errorf("shard of samples [%d, %d) of a batch of %d", shard.First, shard.First+shard.Len, shard.Global)
	}
	n := sde.Blocks()
	if err := checkPrecond(PrecondEDM, sde.Config().Objective, n); err != nil {
		return nil, err
	}
	dropout, _ := net.(layers.Dropouter)
	shardDrop, _ := net.(shardDropouter)
	if dropout != nil && shardDrop == nil && !shard.whole() {
		return nil, fmt.Errorf("the network's dropout cannot draw the masks of a shard of the batch: train on one rank")
	}
	drawTimes, err := newTimeSampler(sde, times)
	if err != nil {
		return nil, err
	}
	if state, out := net.Widths(); state != n*dim || out != dim {
		return nil, fmt.Errorf("score network maps a state of %d values to %d, but a %d-block SDE on %d-dimensional data needs %d → %d",
			state, out, n, dim, n*dim, dim)
	}
	batch := shard.Len
	q0 := make([]float32, batch*dim)
	whole := q0
	if !shard.whole() {
		whole = make([]float32, shard.Global*dim)
	}
	ts := make([]float64, batch)
	noise := make([]float32, batch*n*dim)
	var x, tt, target *staging
	var grad *tensor.Tensor
	return func(c *StepContext) (*autograd.Value, error) {
		if grad == nil || grad.Device() != c.Device {
			var err error
			if x, err = newStaging(c.Device, batch, n*dim); err != nil {
				return nil, err
			}
			if tt, err = newStaging(c.Device, batch); err != nil {
				return nil, err
			}
			if target, err = newStaging(c.Device, batch, dim); err != nil {
				return nil, err
			}
			if grad = tensor.New(c.Device, batch, dim); grad.Err() != nil {
				return nil, grad.Err()
			}
		}
		for _, s := range []*staging{x, tt, target} {
			if err := s.begin(); err != nil {
				return nil, err
			}
		}
		data(c.RNG, whole)
		if !shard.whole() {
			copy(q0, whole[shard.First*dim:])
		}
		drawTimes.fill(ts, c.Stream(rng.StreamTimes), shard.First)
		defer shardDropout(c, dropout, shardDrop, shard)()
		c.Stream(rng.StreamNoise).FillNormalFrom(noise, uint64(shard.First*n*dim))
		var eps, v [hold.MaxBlocks]float64
		for b, t := range ts {
			p, err := sde.EDMPrecond(t, hold.EDMSigmaData)
			if err != nil {
				return nil, err
			}
			base := b * n * dim
			for i := range dim {
				for j := range n {
					eps[j] = float64(noise[base+j*dim+i])
				}
				target.host[b*dim+i] = float32(p.Draw(v[:n], float64(q0[b*dim+i]), eps[:n]))
				for j := range n {
					x.host[base+j*dim+i] = float32(v[j])
				}
			}
			tt.host[b] = float32(t)
		}
		for _, s := range []*staging{x, tt, target} {
			if err := s.upload(); err != nil {
				return nil, err
			}
		}
		g := c.Tape
		out := net.ScoreForward(g, g.Const(x.dev), g.Const(tt.dev))
		out.Grad = tensor.ScoreLoss(grad, out.T, target.dev, c.Stats, shard.Global)
		return out, nil
	}, nil
}

// precondCache holds the preconditioning of the last time a scorer saw: samplers pass one time for a
// whole batch.
type precondCache struct {
	t  float64
	ok bool
	p  hold.Precond
}

func (pc *precondCache) at(sde *hold.SDE, t float64) (*hold.Precond, error) {
	if !pc.ok || pc.t != t {
		p, err := sde.EDMPrecond(t, hold.EDMSigmaData)
		if err != nil {
			return nil, err
		}
		pc.p, pc.t, pc.ok = p, t, true
	}
	return &pc.p, nil
}

// precondInput writes the network input of the states x (B × n·d, float64) at times t into dst.
func precondInput(dst []float32, x, t []float64, sde *hold.SDE, pc *precondCache) error {
	n := sde.Blocks()
	width := len(x) / len(t)
	d := width / n
	var u, v [hold.MaxBlocks]float64
	for b, tb := range t {
		p, err := pc.at(sde, tb)
		if err != nil {
			return err
		}
		base := b * width
		for i := range d {
			for j := range n {
				u[j] = x[base+j*d+i]
			}
			p.Input(v[:n], u[:n])
			for j := range n {
				dst[base+j*d+i] = float32(v[j])
			}
		}
	}
	return nil
}

// precondScore turns the network outputs f (B × d) of the states x into last-block scores dst.
func precondScore(dst []float64, f []float32, x, t []float64, sde *hold.SDE, pc *precondCache) error {
	n := sde.Blocks()
	width := len(x) / len(t)
	d := width / n
	var u [hold.MaxBlocks]float64
	for b, tb := range t {
		p, err := pc.at(sde, tb)
		if err != nil {
			return err
		}
		for i := range d {
			for j := range n {
				u[j] = x[b*width+j*d+i]
			}
			dst[b*d+i] = p.Score(u[:n], p.X0(u[:n], float64(f[b*d+i])))
		}
	}
	return nil
}
