package layers

import (
	"math"
	"slices"
	"strings"
	"testing"

	"holdgo/autograd"
	"holdgo/rng"
	"holdgo/tensor"
)

// TestNCSNppParamCount checks the trainable-parameter counts of
// docs/ncsnpp.md#presets-and-parameter-counts (HOLD CIFAR-10 with 9 input
// channels; the same with 4 res-blocks), which a parameter counter mirroring
// score_sde's constructor gives too.
func TestNCSNppParamCount(t *testing.T) {
	for _, c := range []struct {
		name string
		nrb  int
		want int
	}{{"ncsnpp-cifar10", 8, 107_600_771}, {"ncsnpp-cifar10", 4, 62_772_611}} {
		cfg, err := NCSNppPreset(c.name, 9, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		cfg.NumResBlocks = c.nrb
		if got := NCSNppParamCount(cfg); got != c.want {
			t.Errorf("%s with %d res-blocks: %d trainable parameters, want %d", c.name, c.nrb, got, c.want)
		}
	}
	cfg, _ := NCSNppPreset("ncsnpp-small", 3, 1, 0)
	m, err := NewNCSNpp(cfg, rng.New(1))
	if err != nil {
		t.Fatal(err)
	}
	if m.Trainable() != NCSNppParamCount(cfg) || m.Params.Len() != m.Trainable()+cfg.NF {
		t.Errorf("built model has %d (%d trainable), count says %d", m.Params.Len(), m.Trainable(), NCSNppParamCount(cfg))
	}
}

// TestNCSNppTinyForwardBackward is the CI smoke test: a tiny NCSN++ on random
// data runs forward and backward, gives finite values of the right shape,
// sends a gradient to every trained parameter, matches central finite
// differences on a few weights, and dropout masks follow their stream.
func TestNCSNppTinyForwardBackward(t *testing.T) {
	cfg, err := NCSNppPreset("ncsnpp-tiny", 6, 2, 8)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewNCSNpp(cfg, rng.New(3))
	if err != nil {
		t.Fatal(err)
	}
	// Wake the init_scale-0 layers so that every path carries gradient.
	r := rng.New(4)
	for i, s := range m.Params.Specs() {
		if strings.Contains(s.Name, "Conv_1.weight") || strings.Contains(s.Name, "NIN_3.W") || i == m.convOut {
			r.FillUniform(m.Params.Slice(m.Params.Data, i), -0.2, 0.2)
		}
	}
	x := tensor.RandN(r, 2, 6, 8, 8)
	ts := []float32{0.05, 0.7}
	w := tensor.RandN(r, 2, 2, 8, 8)
	loss := func(g *autograd.Tape) *autograd.Value {
		out := m.Forward(g, g.Const(x), ts)
		if s := out.Shape(); len(s) != 4 || s[0] != 2 || s[1] != 2 || s[2] != 8 || s[3] != 8 {
			t.Fatalf("output shape %v", s)
		}
		return g.Sum(g.Mul(out, g.Const(w)))
	}
	g := autograd.NewTape(tensor.CPU)
	m.Params.ZeroGrad()
	l := loss(g)
	g.Backward(l)
	for i, s := range m.Params.Specs() {
		if i == m.fourier {
			continue
		}
		var sq float64
		for _, v := range m.Params.Slice(m.Params.Grad, i) {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				t.Fatalf("%s: non-finite gradient", s.Name)
			}
			sq += float64(v) * float64(v)
		}
		if sq == 0 && !strings.HasSuffix(s.Name, "NIN_1.b") { // key biases: exactly zero (softmax shift)
			t.Errorf("%s: no gradient", s.Name)
		}
	}
	// Finite differences on the first element of a few weights.
	f := func() float64 {
		g := autograd.NewTape(tensor.CPU)
		g.SetNoGrad(true)
		return float64(loss(g).T.Item())
	}
	for _, name := range []string{"all_modules.2.weight", "all_modules.4.Conv_0.weight", "all_modules.8.NIN_0.W", "all_modules.6.Conv2d_0.weight", "all_modules.13.Conv_0.weight"} {
		i, err := m.Params.Index(name)
		if err != nil {
			t.Fatal(err)
		}
		p := m.Params.Slice(m.Params.Data, i)
		orig, h := p[0], float32(1e-2)
		p[0] = orig + h
		fp := f()
		p[0] = orig - h
		fm := f()
		p[0] = orig
		fd, ana := (fp-fm)/(2*float64(h)), float64(m.Params.Slice(m.Params.Grad, i)[0])
		if !(math.Abs(fd-ana) <= 2e-2*math.Abs(fd)+1e-2) {
			t.Errorf("%s[0]: gradient %.6g, finite difference %.6g", name, ana, fd)
		}
	}
	// Dropout: off by default, a fixed stream gives a fixed mask.
	m.Config.Dropout = 0.5
	eval := f()
	m.SetDropout(&rng.Stream{Key: 9, Step: 2})
	a := f()
	m.SetDropout(&rng.Stream{Key: 9, Step: 2})
	b := f()
	m.SetDropout(nil)
	if a != b || a == eval || f() != eval {
		t.Errorf("dropout: %v, %v with one stream, %v in evaluation", a, b, eval)
	}
}

// TestParamsFreeze: a network on frozen parameters (its convolutions reuse their transformed
// weights) gives the output of the same network unfrozen, bit for bit, on every call; after Thaw a
// change of the weights reaches the output; a move to a device and back keeps the parameters frozen.
func TestParamsFreeze(t *testing.T) {
	cfg, err := NCSNppPreset("ncsnpp-tiny", 3, 1, 32) // 32×32 at batch 1: the 3×3 convolutions run F(4,3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewNCSNpp(cfg, rng.New(5))
	if err != nil {
		t.Fatal(err)
	}
	r := rng.New(6)
	x := tensor.RandN(r, 1, 3, 32, 32)
	forward := func() []float32 {
		g := autograd.NewTape(tensor.CPU)
		g.SetNoGrad(true)
		return m.Forward(g, g.Const(x), []float32{0.3}).T.Data()
	}
	want := forward()
	m.Params.Freeze()
	for call := range 2 {
		if got := forward(); !slices.Equal(got, want) {
			t.Fatalf("call %d on frozen parameters differs from the unfrozen output", call)
		}
	}
	if err := m.Params.ToDevice(tensor.Reference); err != nil {
		t.Fatal(err)
	}
	if err := m.Params.ToDevice(tensor.CPU); err != nil {
		t.Fatal(err)
	}
	if !m.Params.Frozen() || !m.Params.Value(m.convIn).T.Frozen() {
		t.Fatal("parameters moved to a device and back are not frozen")
	}
	m.Params.Thaw()
	if m.Params.Value(m.convIn).T.Frozen() {
		t.Fatal("Thaw left a parameter frozen")
	}
	w := m.Params.Slice(m.Params.Data, m.convIn)
	for i := range w {
		w[i] *= 0.5
	}
	if got := forward(); slices.Equal(got, want) {
		t.Fatal("after Thaw, halving the input convolution's weight left the output unchanged")
	}
}
