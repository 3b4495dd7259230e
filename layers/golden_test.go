package layers

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/checkpoint"
	"holdgo/optim"
	"holdgo/tensor"
)

// TestMLPGoldenPyTorch matches forward, loss, every gradient and three Adam
// steps against PyTorch (testdata/golden/mlp.safetensors, made by
// scripts/golden_mlp.py).
func TestMLPGoldenPyTorch(t *testing.T) {
	f, err := checkpoint.Load("../testdata/golden/mlp.safetensors")
	if err != nil {
		t.Fatal(err)
	}
	const batch = 16
	m, err := NewMLP(MLPConfig{In: 7, Hidden: 32, Out: 2, Layers: 5}, tensor.NewRNG(0))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range m.Params.Specs() {
		if err := f.Into(s.Name, m.Params.Slice(m.Params.Data, i), s.Shape...); err != nil {
			t.Fatal(err)
		}
	}
	load := func(name string, shape ...int) *tensor.Tensor {
		d, err := f.Float32(name, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return tensor.FromSlice(d, shape...)
	}
	x, ts, eps := load("x", batch, 6), load("t", batch), load("eps", batch, 2)

	g := autograd.NewTape(tensor.CPU)
	step := func() (out *tensor.Tensor, loss float32) {
		g.Reset()
		m.Params.ZeroGrad()
		o := m.ScoreForward(g, g.Const(x), g.Const(ts))
		l := g.Mean(g.Sum(g.Square(g.Add(o, g.Const(eps))), 1)) // Σ over dims, mean over batch
		// The backward sweep recycles the output's storage: keep a copy.
		out = o.T.Clone()
		g.Backward(l)
		return out, l.T.Item()
	}
	out, loss := step()
	closeRel(t, "out", out.Data(), load("out", batch, 2).Data(), 1e-5)
	closeRel(t, "loss", []float32{loss}, load("loss", 1).Data(), 1e-5)
	for i, s := range m.Params.Specs() {
		closeRel(t, "grad."+s.Name, m.Params.Slice(m.Params.Grad, i), load("grad."+s.Name, s.Shape...).Data(), 1e-5)
	}

	adam := newAdamOn(t, m.Params)
	adam(1e-3)
	checkParams := func(prefix string) {
		for i, s := range m.Params.Specs() {
			closeRel(t, prefix+s.Name, m.Params.Slice(m.Params.Data, i), load(prefix+s.Name, s.Shape...).Data(), 1e-5)
		}
	}
	checkParams("adam1.")
	step()
	adam(1e-3)
	_, loss3 := step()
	closeRel(t, "loss3", []float32{loss3}, load("loss3", 1).Data(), 1e-5)
	adam(1e-3)
	checkParams("adam3.")
}

// newAdamOn returns a function that applies one Adam step (optim.Adam's settings, no clipping) with
// learning rate lr to p's parameters on their device (tensor.Adam), counting the steps.
func newAdamOn(t *testing.T, p *Params) func(lr float64) {
	t.Helper()
	a, dev := optim.NewAdam(p.Len()), p.Device()
	m, v, stats := tensor.New(dev, p.Len()), tensor.New(dev, p.Len()), tensor.New(dev, tensor.StatsLen)
	return func(lr float64) {
		t.Helper()
		a.Step++
		tensor.Adam(p.DevData, p.DevGrad, m, v, stats, tensor.AdamStep{Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps, LR: lr, Step: a.Step})
		if err := tensor.Err(p.DevData); err != nil {
			t.Fatal(err)
		}
	}
}

// closeRel checks max|got-want| ≤ tol·max|want| (relative to the tensor's
// scale, so entries near zero are not judged against themselves).
func closeRel(t *testing.T, name string, got, want []float32, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", name, len(got), len(want))
	}
	var maxErr, scale float64
	for i := range got {
		maxErr = max(maxErr, math.Abs(float64(got[i])-float64(want[i])))
		scale = max(scale, math.Abs(float64(want[i])))
	}
	if math.IsNaN(maxErr) || !(maxErr <= tol*scale) {
		t.Errorf("%s: max error %.3g, scale %.3g (relative %.3g > %g)", name, maxErr, scale, maxErr/scale, tol)
	}
}
