package layers

import (
	"testing"

	"holdgo/autograd"
	"holdgo/internal/parallel"
	"holdgo/optim"
	"holdgo/tensor"
)

// BenchmarkMLPTrainStep is one training step of the toy score network at
// batch 512 (HOLD state of 2-D data: 6 inputs plus time, 2 outputs): forward,
// loss, backward, clipping, Adam and EMA. Allocations per step are reported;
// tensor memory comes from the tape's pool once warm.
func BenchmarkMLPTrainStep(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(map[int]string{1: "threads=1", 2: "threads=2"}[threads], func(b *testing.B) {
			prev := parallel.SetThreads(threads)
			defer parallel.SetThreads(prev)
			rng := tensor.NewRNG(1)
			m, err := NewMLP(ToyScoreNet(6, 2), rng)
			if err != nil {
				b.Fatal(err)
			}
			const batch = 512
			x, ts, eps := tensor.RandN(rng, batch, 6), tensor.RandU(rng, 1e-5, 7, batch), tensor.RandN(rng, batch, 2)
			adam, ema := optim.NewAdam(m.Params.Len()), optim.NewEMA(0.999, m.Params.Data)
			g := autograd.NewTape(tensor.CPU)
			step := func() {
				g.Reset()
				m.Params.ZeroGrad()
				out := m.ScoreForward(g, g.Const(x), g.Const(ts))
				g.Backward(g.Mean(g.Sum(g.Square(g.Add(out, g.Const(eps))), 1)))
				optim.ClipGradNorm(m.Params.Grad, 1)
				adam.Update(m.Params.Data, m.Params.Grad, 1e-3)
				ema.Update(m.Params.Data)
			}
			step()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				step()
			}
			flops := 3 * 2 * float64(batch) * float64(7*128+3*128*128+128*2)
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/step")
		})
	}
}
