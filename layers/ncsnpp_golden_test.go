package layers

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"holdgo/autograd"
	"holdgo/checkpoint"
	"holdgo/rng"
	"holdgo/tensor"
)

// TestNCSNppGoldenPyTorch matches the NCSN++ forward pass, the loss and every
// parameter gradient against PyTorch (testdata/golden/ncsnpp_*.safetensors,
// made by scripts/golden_ncsnpp.py from an independent re-implementation of
// score_sde's blocks): the output within 1e-4 and the gradients within 1e-3,
// max error relative to each tensor's largest value.
func TestNCSNppGoldenPyTorch(t *testing.T) {
	for _, name := range []string{"fir", "naive"} {
		t.Run(name, func(t *testing.T) { checkNCSNppGolden(t, "../testdata/golden/ncsnpp_"+name+".safetensors") })
	}
}

func checkNCSNppGolden(t *testing.T, path string) {
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var gc struct {
		ImageSize        int     `json:"image_size"`
		InChannels       int     `json:"in_channels"`
		OutChannels      int     `json:"out_channels"`
		NF               int     `json:"nf"`
		ChMult           []int   `json:"ch_mult"`
		NumResBlocks     int     `json:"num_res_blocks"`
		AttnResolutions  []int   `json:"attn_resolutions"`
		Embedding        string  `json:"embedding"`
		FourierScale     float64 `json:"fourier_scale"`
		FIR              bool    `json:"fir"`
		ProgressiveInput string  `json:"progressive_input"`
		Batch            int     `json:"batch"`
	}
	if err := json.Unmarshal([]byte(f.Meta["config"]), &gc); err != nil {
		t.Fatal(err)
	}
	cfg := NCSNppConfig{Name: "golden", ImageSize: gc.ImageSize, InChannels: gc.InChannels, OutChannels: gc.OutChannels,
		NF: gc.NF, ChMult: gc.ChMult, NumResBlocks: gc.NumResBlocks, AttnResolutions: gc.AttnResolutions,
		Embedding: gc.Embedding, FourierScale: gc.FourierScale, FIR: gc.FIR, ProgressiveInput: gc.ProgressiveInput}
	m, err := NewNCSNpp(cfg, rng.New(0))
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
	b, s := gc.Batch, gc.ImageSize
	x, ts := load("x", b, gc.InChannels, s, s), load("t", b)
	eps := load("eps", b, gc.OutChannels, s, s)

	g := autograd.NewTape(tensor.CPU)
	m.Params.ZeroGrad()
	out := m.Forward(g, g.Const(x), ts.Data())
	loss := g.Mean(g.Sum(g.Square(g.Add(out, g.Const(eps))), 1, 2, 3))
	outT := out.T.Clone() // the backward sweep recycles the output's storage
	g.Backward(loss)

	// floor is a lower bound on the scale of a tensor: the key biases of
	// attention (NIN_1.b) have an exactly zero gradient (softmax ignores a
	// per-query constant), so both sides are rounding noise, judged against
	// the model's gradient scale instead.
	var floor float64
	report := func(name string, got, want []float32, tol float64) {
		t.Helper()
		var maxErr, num, den float64
		scale := floor
		for i := range got {
			d := float64(got[i]) - float64(want[i])
			maxErr = max(maxErr, math.Abs(d))
			scale = max(scale, math.Abs(float64(want[i])))
			num += d * d
			den += float64(want[i]) * float64(want[i])
		}
		rel := maxErr / scale
		if math.IsNaN(rel) || !(rel <= tol) {
			t.Errorf("%s: max error %.3g relative to max |want| %.3g = %.3g > %g (NMSE %.3g)", name, maxErr, scale, rel, tol, num/den)
		}
		if testing.Verbose() && (name == "out" || name == "loss") {
			t.Logf("%s: max relative error %.3g, NMSE %.3g", name, rel, num/den)
		}
	}
	report("out", outT.Data(), load("out", b, gc.OutChannels, s, s).Data(), 1e-4)
	report("loss", loss.T.Data(), load("loss", 1).Data(), 1e-4)
	for i, sp := range m.Params.Specs() {
		if i != m.fourier {
			for _, v := range load("grad."+sp.Name, sp.Shape...).Data() {
				floor = max(floor, 1e-4*math.Abs(float64(v)))
			}
		}
	}
	worst, worstName := 0.0, ""
	for i, sp := range m.Params.Specs() {
		if i == m.fourier {
			continue
		}
		got, want := m.Params.Slice(m.Params.Grad, i), load("grad."+sp.Name, sp.Shape...).Data()
		report("grad."+sp.Name, got, want, 1e-3)
		maxErr, scale := 0.0, floor
		for j := range got {
			maxErr = max(maxErr, math.Abs(float64(got[j])-float64(want[j])))
			scale = max(scale, math.Abs(float64(want[j])))
		}
		if r := maxErr / scale; r > worst && !strings.HasSuffix(sp.Name, "NIN_1.b") {
			worst, worstName = r, sp.Name
		}
	}
	t.Logf("%d trainable parameters; worst gradient (key biases aside): %s, max relative error %.3g", m.Trainable(), worstName, worst)
}
