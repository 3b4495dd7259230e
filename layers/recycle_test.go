package layers

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/rng"
	"holdgo/tensor"
)

// TestNCSNppRecycleBitIdentical trains a small NCSN++ (dropout on, every
// block kind: res-blocks with up- and down-sampling, attention, the input
// pyramid) for a few Adam steps with the backward sweep recycling storage,
// with it keeping everything, and with it poisoning freed storage with NaN:
// the parameters after the steps must be bit-identical. A closure reading
// storage the plan freed would read NaN (poison) or another tensor's values
// (recycling).
func TestNCSNppRecycleBitIdentical(t *testing.T) {
	cfg, err := NCSNppPreset("ncsnpp-tiny", 6, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dropout = 0.1
	train := func(mode autograd.Recycle) []float32 {
		m, err := NewNCSNpp(cfg, rng.New(3))
		if err != nil {
			t.Fatal(err)
		}
		m.SetDropout(&rng.Stream{Key: 9})
		adam := newAdamOn(t, m.Params)
		r := rng.New(4)
		g := autograd.NewTape(tensor.CPU)
		g.SetRecycle(mode)
		for range 3 {
			x := tensor.RandN(r, 2, 6, 8, 8)
			ts := []float32{0.05, 0.7}
			g.Reset()
			m.Params.ZeroGrad()
			out := m.Forward(g, g.Const(x), ts)
			g.Backward(g.Mean(g.Square(out)))
			adam(1e-3)
		}
		return m.Params.Data
	}
	want := train(autograd.RecycleOff)
	for _, mode := range []autograd.Recycle{autograd.RecycleOn, autograd.RecyclePoison} {
		got := train(mode)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("recycle mode %d: parameter %d is %v, without recycling %v", mode, i, got[i], want[i])
			}
		}
	}
}
