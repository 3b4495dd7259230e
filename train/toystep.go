package train

import (
	"holdgo/autograd"
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/rng"
	"holdgo/tensor"
)

// ToyStep returns one training step of the paper's toy score network on
// fixed random data (HOLD state of 2-D data: 6 inputs plus time, 2
// outputs): forward, loss, backward, clipping, Adam, EMA. It is the unit
// the speed benchmarks time (holdctl bench mlp, go test -bench), not a
// training run. It also returns the network's multiply-adds per sample.
func ToyStep(batch, hidden int, seed uint64) (step func(), flopsPerSample float64, err error) {
	r := rng.New(seed)
	cfg := layers.ToyScoreNet(6, 2)
	cfg.Hidden = hidden
	m, err := layers.NewMLP(cfg, r)
	if err != nil {
		return nil, 0, err
	}
	x, ts, eps := tensor.RandN(r, batch, 6), tensor.RandU(r, 1e-5, 7, batch), tensor.RandN(r, batch, 2)
	opt := newCPUOptimizer(optim.NewAdam(m.Params.Len()), optim.NewEMA(0.999, m.Params.Data))
	g := autograd.NewTape(tensor.CPU)
	step = func() {
		g.Reset()
		m.Params.ZeroGrad()
		out := m.ScoreForward(g, g.Const(x), g.Const(ts))
		g.Backward(g.Mean(g.Sum(g.Square(g.Add(out, g.Const(eps))), 1)))
		if err := opt.step(m.Params, 1e-3, 1); err != nil {
			panic(err) // the toy step's shapes are fixed: an op error is a bug
		}
	}
	macs := 0
	for _, s := range m.Params.Specs() {
		if len(s.Shape) == 2 {
			macs += s.Shape[0] * s.Shape[1]
		}
	}
	// Forward, input gradient and weight gradient: three products of 2·MACs.
	return step, 3 * 2 * float64(macs), nil
}
