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

// TestCPUFusedMatchesReference: over several steps, with and without clipping, on sizes across
// the worker pool's grain, the CPU device's SumSq, Adam and EMA (internal/vec's SIMD kernels: the
// CPU's one Adam) against the Reference device's plain loops (the other): the norm within float64
// rounding of the sums' orders, the parameters, moments and EMA weights bit for bit (maxULP 0,
// measured with HOLDGO_ISA=avx512, avx2 and generic: the kernels do the Reference's float32
// operations in its order). Clipping acts on some steps and not on others.
func TestCPUFusedMatchesReference(t *testing.T) {
	const maxULP = 0
	for _, c := range []struct {
		n       int
		maxNorm float64
	}{{1, 0}, {17, 1}, {40000, 0.5}, {40000, 1e6}} {
		t.Run(fmt.Sprintf("n=%d/clip=%g", c.n, c.maxNorm), func(t *testing.T) {
			r := tensor.NewRNG(3)
			p := tensor.RandN(r, c.n)
			type state struct{ params, m, v, shadow, stats *tensor.Tensor }
			on := func(dev tensor.Device) state {
				to := func(h *tensor.Tensor) *tensor.Tensor {
					d, err := h.ToDevice(dev)
					if err != nil {
						t.Fatal(err)
					}
					return d
				}
				return state{to(p.Clone()), to(tensor.Zeros(c.n)), to(tensor.Zeros(c.n)), to(p.Clone()), to(tensor.Zeros(tensor.StatsLen))}
			}
			cpu, ref := on(tensor.CPU), on(tensor.Reference)
			ema := optim.NewEMA(0.99, p.Data())
			for step := 1; step <= 3; step++ {
				g := tensor.RandN(r, c.n)
				decay := ema.NextDecay()
				ema.Updates++
				norms := make([]float64, 2)
				for i, s := range []state{cpu, ref} {
					gd, err := g.Clone().ToDevice(s.params.Device())
					if err != nil {
						t.Fatal(err)
					}
					tensor.SumSq(s.stats, gd)
					tensor.Adam(s.params, gd, s.m, s.v, s.stats,
						tensor.AdamStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, LR: 1e-2, Step: step, MaxNorm: c.maxNorm})
					tensor.EMA(s.shadow, s.params, s.stats, decay)
					_, norm, skipped, err := tensor.ReadStats(s.stats)
					if err != nil || skipped != 0 {
						t.Fatal(err, skipped)
					}
					norms[i] = norm
				}
				if !(math.Abs(norms[0]-norms[1]) <= 1e-12*norms[1]) {
					t.Fatalf("step %d: norm %.17g on the CPU, %.17g on the Reference", step, norms[0], norms[1])
				}
				for _, b := range []struct {
					name     string
					got, ref *tensor.Tensor
				}{{"params", cpu.params, ref.params}, {"m", cpu.m, ref.m}, {"v", cpu.v, ref.v}, {"EMA", cpu.shadow, ref.shadow}} {
					gh, _ := b.got.ToHost()
					rh, _ := b.ref.ToHost()
					for i, x := range gh.Data() {
						if d := ulps(x, rh.Data()[i]); !(d <= maxULP) {
							t.Fatalf("step %d: %s[%d] %v on the CPU, %v on the Reference (%d ulps)", step, b.name, i, x, rh.Data()[i], d)
						}
					}
				}
			}
		})
	}
}

// ulps is the distance of two float32 values in units in the last place (same sign assumed; 0 for
// equal values, a large number across signs).
func ulps(a, b float32) int64 {
	d := int64(math.Float32bits(a)) - int64(math.Float32bits(b))
	if d < 0 {
		d = -d
	}
	return d
}

// TestAdamFirstStep: on the CPU and the Reference, with bias correction Adam's first update is
// lr·g/(|g|+eps).
func TestAdamFirstStep(t *testing.T) {
	for _, dev := range []tensor.Device{tensor.CPU, tensor.Reference} {
		g := []float32{0.5, -2e-3}
		to := func(x []float32) *tensor.Tensor {
			d, err := tensor.FromSlice(x, len(x)).ToDevice(dev)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		p := to([]float32{1, 1})
		tensor.Adam(p, to(g), to(make([]float32, 2)), to(make([]float32, 2)), to(make([]float32, tensor.StatsLen)),
			tensor.AdamStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, LR: 0.1, Step: 1})
		h, err := p.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		for i, gi := range g {
			want := 1 - 0.1*float64(gi)/(math.Abs(float64(gi))+1e-8)
			if !(math.Abs(float64(h.Data()[i])-want) <= 1e-6) {
				t.Fatalf("%s: param %d = %v, want %v", dev.Name(), i, h.Data()[i], want)
			}
		}
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
