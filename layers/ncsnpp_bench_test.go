package layers

import (
	"fmt"
	"testing"

	"holdgo/autograd"
	"holdgo/rng"
	"holdgo/tensor"
)

// BenchmarkNCSNpp times forward and forward+backward per image of
// ncsnpp-small (28×28, 3 → 1 channels, batch 32) and ncsnpp-cifar10
// (32×32, 9 → 3, batch 4): cmd/holdctl bench ncsnpp compares with PyTorch.
func BenchmarkNCSNpp(b *testing.B) {
	for _, c := range []struct {
		name      string
		in, batch int
	}{{"ncsnpp-small", 3, 32}, {"ncsnpp-cifar10", 9, 4}} {
		var (
			m   *NCSNpp
			x   *tensor.Tensor
			ts  []float32
			g   *autograd.Tape
			cfg NCSNppConfig
		)
		setup := func(b *testing.B) { // lazily: -bench may select only the other model
			if m != nil {
				return
			}
			var err error
			if cfg, err = NCSNppPreset(c.name, c.in, 0, 0); err != nil {
				b.Fatal(err)
			}
			cfg.Dropout = 0
			if m, err = NewNCSNpp(cfg, rng.New(1)); err != nil {
				b.Fatal(err)
			}
			r := rng.New(2)
			x = tensor.RandN(r, c.batch, cfg.InChannels, cfg.ImageSize, cfg.ImageSize)
			ts = tensor.RandU(r, 0.01, 1, c.batch).Data()
			g = autograd.NewTape(tensor.CPU)
		}
		for _, backward := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/batch=%d/backward=%v", c.name, c.batch, backward), func(b *testing.B) {
				setup(b)
				if backward { // the forward pass runs on frozen weights, as the samplers run it
					m.Params.Thaw()
				} else {
					m.Params.Freeze()
				}
				b.ResetTimer()
				g.SetNoGrad(!backward)
				for range b.N {
					g.Reset()
					m.Params.ZeroGrad()
					out := m.Forward(g, g.Const(x), ts)
					if backward {
						g.Backward(g.Mean(g.Square(out)))
					}
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*c.batch), "ms/image")
			})
		}
	}
}
