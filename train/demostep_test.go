package train

import (
	"testing"

	"holdgo/optim"
)

// BenchmarkDemoStep is one training step of holdctl demo's recipe (the toy
// MLP with log t, the x̂₀ estimate and 64 Fourier features of it, mixed
// times, batch 512): data, times, noise, the reparameterisation, forward,
// backward, Adam and EMA.
func BenchmarkDemoStep(b *testing.B) {
	cfg := DefaultRunConfig()
	cfg.Times, cfg.TimesLogMin, cfg.LogTime, cfg.Fourier, cfg.Estimate, cfg.LRDecay = TimesMixed, 1e-3, true, 64, true, optim.DecayCosine
	cfg.Steps, cfg.Batch = 1<<30, 256
	built, err := cfg.Build()
	if err != nil {
		b.Fatal(err)
	}
	loss, err := ScoreLoss(built.SDE, built.Net, built.Source.Sample, cfg.Batch, built.Source.Dimension(), cfg.TimeSampling())
	if err != nil {
		b.Fatal(err)
	}
	tr, err := New(cfg.Options(), built.Net.Parameters(), loss)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := tr.TrainStep(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/step")
}
