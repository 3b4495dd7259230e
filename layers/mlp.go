package layers

import (
	"fmt"
	"math"

	"holdgo/autograd"
	"holdgo/tensor"
)

// MLPConfig sizes a multilayer perceptron: Layers Linear layers
// In → Hidden → … → Hidden → Out with SiLU between them.
type MLPConfig struct {
	In, Hidden, Out, Layers int
	// LogTime (score networks) adds log t as one more input after t, so
	// the network sees small times spread out: t ∈ [0.01, 0.1], where the
	// toy data's structure is decided, is 1.3 % of the raw range [0, 7]
	// but a third of the log range [log 10⁻³, log 7].
	LogTime bool
	// Fourier > 0 (score networks) adds Fourier features of the first
	// FourierInputs state values (the data block): sin and cos of 2π·B·x
	// for a fixed B (Fourier × FourierInputs) drawn N(0, FourierScale²)
	// at initialisation and stored as parameter mlp.fourier (it takes no
	// gradient). Tancik et al. 2020, "Fourier Features Let Networks Learn
	// High Frequency Functions in Low Dimensional Domains": a SiLU MLP on
	// raw coordinates learns the fine structure of the data (the Swiss
	// rolls' arms are 0.063 apart, 2·10⁻⁴ thick) only slowly.
	Fourier, FourierInputs int
	FourierScale           float64
	// Estimate (score networks) adds an estimate x̂₀ (batch, Out) of the
	// data block, computed from the state and t by MLP.Estimator (train
	// sets the kernel's flat-prior estimate, hold.SDE.EstimateWeights), as
	// Out more inputs, and takes the Fourier features of x̂₀ rather than of
	// the state's first block (FourierInputs must then be Out). At the
	// times where the data's fine structure is decided the state ties x₀
	// down far better than the position alone does (docs/demo.md).
	Estimate bool
}

// ToyScoreNet is the paper's toy score network for a state of width n·d:
// 5 Linear layers, 128 hidden units, SiLU, input (state, t), output d.
func ToyScoreNet(stateDim, outDim int) MLPConfig {
	return MLPConfig{In: stateDim + 1, Hidden: 128, Out: outDim, Layers: 5}
}

// Validate reports a configuration that cannot build a network.
func (c MLPConfig) Validate() error {
	if c.In < 1 || c.Out < 1 || c.Layers < 1 || (c.Layers > 1 && c.Hidden < 1) {
		return fmt.Errorf("mlp: need In, Out, Layers ≥ 1 and Hidden ≥ 1 (got %+v)", c)
	}
	if c.Fourier < 0 || (c.Fourier > 0 && (c.FourierInputs < 1 || c.FourierInputs >= c.In || !(c.FourierScale > 0) || math.IsInf(c.FourierScale, 0))) {
		return fmt.Errorf("mlp: Fourier features need 1 ≤ FourierInputs < In and a finite FourierScale > 0 (got %+v)", c)
	}
	if c.Estimate && c.Fourier > 0 && c.FourierInputs != c.Out {
		return fmt.Errorf("mlp: Fourier features of the estimate x̂₀ need FourierInputs = Out (got %+v)", c)
	}
	return nil
}

// MLP is Linear layers with SiLU activations. Parameters are named
// mlp.<i>.weight ([out, in], PyTorch layout) and mlp.<i>.bias.
type MLP struct {
	Config MLPConfig
	Params *Params
	// Estimator maps the state x (batch, In−1) and times t (batch) to the
	// estimate x̂₀ (batch, Out) of Config.Estimate, differentiably in x.
	Estimator func(g *autograd.Tape, x, t *autograd.Value) *autograd.Value
}

func (c MLPConfig) dims() []int {
	d := []int{c.In}
	if c.LogTime {
		d[0]++
	}
	d[0] += 2 * c.Fourier
	if c.Estimate {
		d[0] += c.Out
	}
	for range c.Layers - 1 {
		d = append(d, c.Hidden)
	}
	return append(d, c.Out)
}

// NewMLP builds an MLP initialised as PyTorch's nn.Linear does: weight and
// bias uniform in ±1/√fan_in, drawn from rng layer by layer.
func NewMLP(c MLPConfig, rng *tensor.RNG) (*MLP, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	d := c.dims()
	var specs []Spec
	for i := range c.Layers {
		specs = append(specs,
			Spec{fmt.Sprintf("mlp.%d.weight", i), []int{d[i+1], d[i]}},
			Spec{fmt.Sprintf("mlp.%d.bias", i), []int{d[i+1]}})
	}
	if c.Fourier > 0 {
		specs = append(specs, Spec{"mlp.fourier", []int{c.Fourier, c.FourierInputs}})
	}
	m := &MLP{Config: c, Params: NewParams(specs)}
	for i := range c.Layers {
		bound := 1 / math.Sqrt(float64(d[i]))
		rng.FillUniform(m.Params.Slice(m.Params.Data, 2*i), -bound, bound)
		rng.FillUniform(m.Params.Slice(m.Params.Data, 2*i+1), -bound, bound)
	}
	if c.Fourier > 0 { // after the layers: the layers draw what they draw without features
		rng.FillNormal(m.Params.Slice(m.Params.Data, 2*c.Layers), 0, c.FourierScale)
	}
	return m, nil
}

// Forward maps x (batch, In) to (batch, Out).
func (m *MLP) Forward(g *autograd.Tape, x *autograd.Value) *autograd.Value {
	h := x
	for i := range m.Config.Layers {
		h = g.Linear(h, m.Params.Value(2*i), m.Params.Value(2*i+1))
		if i < m.Config.Layers-1 {
			h = g.SiLU(h)
		}
	}
	return h
}

// ScoreForward evaluates the toy score network: the state x (batch, n·d)
// and the times t (batch) are joined as cat(x, t), raw t, as CLD-SGM's toy
// MLP; with Estimate cat(x, x̂₀, …), with Fourier features cat(…, sin z,
// cos z, t) for z = 2π·s·Bᵀ, s = x̂₀ or x[:, :P], and log t last with LogTime.
func (m *MLP) ScoreForward(g *autograd.Tape, x, t *autograd.Value) *autograd.Value {
	b := x.Shape()[0]
	in, src := []*autograd.Value{x}, x
	if m.Config.Estimate {
		if m.Estimator == nil {
			panic("layers: an MLP with Estimate needs its Estimator set")
		}
		src = m.Estimator(g, x, t)
		in = append(in, src)
	}
	if c := m.Config; c.Fourier > 0 {
		// z = 2π·src[:, :P]·Bᵀ; features sin z, cos z = sin(z + π/2). B enters as a constant.
		z := g.MatMul(g.Slice(src, 1, 0, c.FourierInputs), g.Const(m.Params.Value(2*c.Layers).T), false, true)
		z = g.MulScalar(z, 2*math.Pi)
		in = append(in, g.Sin(g.Concat(1, z, g.AddScalar(z, math.Pi/2))))
	}
	t = g.Reshape(t, b, 1)
	in = append(in, t)
	if m.Config.LogTime {
		in = append(in, g.Log(t))
	}
	return m.Forward(g, g.Concat(1, in...))
}
