package train

import (
	"sync"
	"testing"

	"holdgo/dist"
	"holdgo/internal/parallel"
	"holdgo/optim"
)

// demoTrainer is a trainer of holdctl demo's recipe (the toy MLP with log t,
// the x̂₀ estimate and 64 Fourier features of it, mixed times, cosine decay,
// batch 256) for rank comm of a data-parallel group.
func demoTrainer(b *testing.B, comm dist.Communicator) *Trainer {
	cfg := DefaultRunConfig()
	cfg.Times, cfg.TimesLogMin, cfg.LogTime, cfg.Fourier, cfg.Estimate, cfg.LRDecay = TimesMixed, 3e-2, true, 64, true, optim.DecayCosine
	cfg.Steps, cfg.Batch = 1<<30, 256
	tr, err := cfg.NewTrainer(comm)
	if err != nil {
		b.Fatal(err)
	}
	return tr
}

// BenchmarkDemoStep is one training step of holdctl demo's recipe: data,
// times, noise, the reparameterisation, forward, backward, Adam and EMA.
// pool: one trainer, its operations split over the worker pool; ranks2: two
// local ranks of half the batch on one thread each (what the demo runs).
func BenchmarkDemoStep(b *testing.B) {
	b.Run("pool", func(b *testing.B) {
		tr := demoTrainer(b, dist.Single{})
		for b.Loop() {
			if _, err := tr.TrainStep(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/step")
	})
	b.Run("ranks2", func(b *testing.B) {
		comms, err := dist.NewLocal(2)
		if err != nil {
			b.Fatal(err)
		}
		defer parallel.SetThreads(parallel.SetThreads(1))
		trs := []*Trainer{demoTrainer(b, comms[0]), demoTrainer(b, comms[1])}
		steps := b.N
		b.ResetTimer()
		var wg sync.WaitGroup
		for _, tr := range trs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range steps {
					if _, err := tr.TrainStep(); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/step")
	})
}
