package train

import "holdgo/optim"

// The training recipe of holdctl demo (docs/demo.md has the measurements). The
// paper's network (5-layer SiLU MLP on (state, t)) with uniform times and a
// constant rate reached precision 0.17 in 120k steps: the samples lay about
// 6·10⁻³ off the rolls, whose points are 2·10⁻⁴ apart across and 10⁻³
// along. What changed that, each measured at 50k steps:
//   - the network also sees the kernel's estimate x̂₀ of x₀ from the whole
//     state and 64 Fourier features of it (σ = 10): the MLP resolves the
//     arms, 0.063 apart (features of the position instead: precision 0.66,
//     a halo around every roll; no features: 0.12);
//   - cosine decay of the rate to 0 (without it precision 0.56 instead of
//     0.66, features of the position);
//   - half the times log-uniform on [3·10⁻², T] and log t as an input: for
//     HOLD-3 the state pins x₀ down below t ≈ 0.03, and the rolls are
//     decided between 0.03 and 0.3, 4 % of a uniform draw on [0, 7]
//     (precision 0.96 from 3·10⁻², 0.95 from 10⁻², 0.92 from 10⁻³, 0.89
//     from 10⁻¹: fewer strays between the rolls);
//   - the rate twice the paper's 1e-3;
//   - batch 256: half the time of 512 per step (precision 0.92 against 0.96,
//     times from 10⁻³).
const (
	DemoSteps        = 50000
	DemoBatch        = 256
	DemoLR           = 2e-3
	DemoFourier      = 64
	DemoFourierScale = 10
	DemoTimesLogMin  = 3e-2
	// DemoRanks local ranks (goroutines of one process, dist.NewLocal) train
	// on the CPU, each half of the batch on one thread: a 128×128 product is
	// too short to split across cores, two half-batches are not. The split is
	// fixed, so the run is the same on one core or many.
	DemoRanks = 2
	// DemoSampleChunk samples make one chunk of the sampler's batch.
	DemoSampleChunk = 500
)

// DemoConfig is the demo's run: HOLD-3 with prior precision l and α alpha on the multi Swiss roll,
// the recipe above for steps steps with seed, the time sampling times (TimesMixed: half log-uniform
// from DemoTimesLogMin), peak rate lr and fourier Fourier features of x̂₀ (0: none), checkpointed at
// the end only.
func DemoConfig(steps int, seed uint64, times string, lr float64, fourier int, l, alpha float64) RunConfig {
	cfg := DefaultRunConfig()
	cfg.Steps, cfg.Seed, cfg.CkptEvery, cfg.Times, cfg.LR, cfg.Batch = steps, seed, 0, times, lr, DemoBatch
	if cfg.Times == TimesMixed {
		cfg.TimesLogMin = DemoTimesLogMin
	}
	cfg.LogTime, cfg.Fourier, cfg.FourierScale, cfg.LRDecay, cfg.Estimate = true, fourier, DemoFourierScale, optim.DecayCosine, true
	cfg.L, cfg.Alpha = l, alpha
	return cfg
}
