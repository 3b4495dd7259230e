package cuda

import (
	"slices"
	"testing"

	"holdgo/autograd"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// tapeOps records the op kinds one training-style forward and backward pass of a score network
// dispatches: ScoreForward on a batch, a weighted sum as the loss, Backward.
func tapeOps(t *testing.T, net layers.ScoreNet, batch int) []tensor.OpKind {
	t.Helper()
	r := rng.New(5)
	state, out := net.Widths()
	x, w := tensor.RandN(r, batch, state), tensor.RandN(r, batch, out)
	times := tensor.RandU(r, 0.01, 1, batch)
	rec := optest.Record(func() {
		g := autograd.NewTape(tensor.CPU)
		y := net.ScoreForward(g, g.Const(x), g.Const(times))
		loss := g.Sum(g.Mul(y, g.Const(w)))
		g.Backward(loss)
		if err := tensor.Err(loss.T); err != nil {
			t.Fatal(err)
		}
	})
	return optest.Kinds(rec)
}

// tapes returns the op kinds of the ncsnpp-tiny network (with dropout on, as in training) and of the
// toy MLP.
func tapes(t *testing.T) map[string][]tensor.OpKind {
	t.Helper()
	cfg, err := layers.NCSNppPreset("ncsnpp-tiny", 3, 3, 8)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dropout = 0.1
	nn, err := layers.NewNCSNpp(cfg, rng.New(1))
	if err != nil {
		t.Fatal(err)
	}
	nn.SetDropout(&rng.Stream{Key: 2})
	mlp, err := layers.NewMLP(layers.ToyScoreNet(6, 2), tensor.NewRNG(3))
	if err != nil {
		t.Fatal(err)
	}
	return map[string][]tensor.OpKind{"ncsnpp-tiny": tapeOps(t, nn, 2), "toy MLP": tapeOps(t, mlp, 5)}
}

// The recording sees the image ops of NCSN++ and the GEMMs of both networks.
func TestTapeRecording(t *testing.T) {
	got := tapes(t)
	for name, want := range map[string][]tensor.OpKind{
		"ncsnpp-tiny": {tensor.OpConv2d, tensor.OpConv2dGradInput, tensor.OpConv2dGradWeight, tensor.OpGroupNorm,
			tensor.OpGroupNormSiLU, tensor.OpGroupNormBackward, tensor.OpGroupNormSiLUBackward,
			tensor.OpGroupNormSiLUDropout, tensor.OpGroupNormSiLUDropoutBackward,
			tensor.OpUpFIRDn2d, tensor.OpSoftmax, tensor.OpMatMul},
		"toy MLP": {tensor.OpMatMul, tensor.OpSiLU, tensor.OpSiLUGrad},
	} {
		for _, k := range want {
			if !slices.Contains(got[name], k) {
				t.Errorf("%s: the recorded tape %v lacks %v", name, got[name], k)
			}
		}
	}
}
