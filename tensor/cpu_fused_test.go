package tensor_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"holdgo/hold"
	"holdgo/hold/holdops"
	"holdgo/optim"
	"holdgo/rng"
	"holdgo/tensor"
)

// TestCPUFusedMatchesOptim: the CPU device's SumSq, Adam and EMA are optim.ClipGradNorm,
// optim.Adam.Update and optim.EMA.Update bit for bit (what a training step on the CPU ran before
// it went through the op list), over several steps, with and without clipping, on sizes across the
// worker pool's grain.
func TestCPUFusedMatchesOptim(t *testing.T) {
	for _, c := range []struct {
		n       int
		maxNorm float64
	}{{1, 0}, {17, 1}, {40000, 0.5}, {40000, 1e6}} {
		t.Run(fmt.Sprintf("n=%d/clip=%g", c.n, c.maxNorm), func(t *testing.T) {
			r := tensor.NewRNG(3)
			p := tensor.RandN(r, c.n).Data()
			want := slices.Clone(p)
			adam, ema := optim.NewAdam(c.n), optim.NewEMA(0.99, want)
			m, v, shadow := tensor.Zeros(c.n), tensor.Zeros(c.n), tensor.FromSlice(slices.Clone(p), c.n)
			stats := tensor.Zeros(tensor.StatsLen)
			params := tensor.FromSlice(p, c.n)
			for step := 1; step <= 3; step++ {
				g := tensor.RandN(r, c.n).Data()
				gWant := slices.Clone(g)
				normWant := optim.ClipGradNorm(gWant, c.maxNorm)
				adam.Update(want, gWant, 1e-2)
				decay := ema.NextDecay()
				ema.Update(want)

				tensor.SumSq(stats, tensor.FromSlice(g, c.n))
				tensor.Adam(params, tensor.FromSlice(g, c.n), m, v, stats,
					tensor.AdamStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, LR: 1e-2, Step: step, MaxNorm: c.maxNorm})
				tensor.EMA(shadow, params, stats, decay)
				_, norm, skipped, err := tensor.ReadStats(stats)
				if err != nil || skipped != 0 {
					t.Fatal(err, skipped)
				}
				if norm != normWant || !slices.Equal(p, want) || !slices.Equal(m.Data(), adam.M) ||
					!slices.Equal(v.Data(), adam.V) || !slices.Equal(shadow.Data(), ema.Shadow) {
					t.Fatalf("step %d: the CPU's fused ops differ from optim (norm %v, want %v)", step, norm, normWant)
				}
			}
		})
	}
}

// TestCPUPerturbMatchesHold: the CPU device's Perturb with holdops' coefficients is
// hold.SDE.Perturb bit for bit, for every block count, BCSM and DSM.
func TestCPUPerturbMatchesHold(t *testing.T) {
	for _, c := range []struct {
		order     int
		objective string
	}{{2, hold.ObjectiveBCSM}, {3, hold.ObjectiveBCSM}, {3, hold.ObjectiveDSM}, {4, hold.ObjectiveDSM}, {1, ""}} {
		cfg := hold.DefaultConfig(hold.KindHOLD)
		cfg.Order, cfg.Objective = c.order, c.objective
		if c.order == 1 {
			cfg = hold.DefaultConfig(hold.KindVP)
		}
		sde, err := hold.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n, batch, d := sde.Blocks(), 37, 21
		dsm := c.objective == hold.ObjectiveDSM
		r := tensor.NewRNG(9)
		b := hold.Batch{Data: tensor.RandN(r, batch, d).Data(), Times: make([]float64, batch),
			Noise: make([]float32, batch*n*d), State: make([]float32, batch*n*d), Target: make([]float32, batch*d)}
		s := rng.Stream{Key: 4, ID: 1}
		s.FillNormal(b.Noise)
		var aux *tensor.Tensor
		if dsm {
			b.Aux = tensor.RandN(r, batch, (n-1)*d).Data()
			aux = tensor.FromSlice(b.Aux, batch, (n-1)*d)
		}
		coef := tensor.Zeros(batch * tensor.PerturbCoefLen)
		for i := range b.Times {
			b.Times[i] = sde.MinTime() + (sde.Horizon()-sde.MinTime())*math.Pow(float64(i)/float64(batch), 2)
			holdops.PutPerturbCoefficients(coef.Data()[i*tensor.PerturbCoefLen:], sde, b.Times[i])
		}
		if err := sde.Perturb(b); err != nil {
			t.Fatal(err)
		}
		x, target := tensor.Zeros(batch, n*d), tensor.Zeros(batch, d)
		tensor.Perturb(x, target, coef, tensor.FromSlice(b.Data, batch, d), tensor.FromSlice(b.Noise, batch, n*d), aux, n)
		if !slices.Equal(x.Data(), b.State) || !slices.Equal(target.Data(), b.Target) {
			t.Errorf("order %d %s: the CPU's Perturb differs from hold.SDE.Perturb", c.order, c.objective)
		}
	}
}
