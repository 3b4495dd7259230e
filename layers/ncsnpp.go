package layers

import (
	"fmt"
	"math"

	"holdgo/autograd"
	"holdgo/rng"
	"holdgo/tensor"
)

// NCSNpp is the NCSN++ score network (docs/ncsnpp.md#the-network). Parameters
// are named as score_sde's state_dict ("all_modules.<i>.<sub>"), in module
// order, so PyTorch weights load by name. The Fourier embedding's fixed
// weights are stored in Params (they are checkpointed with the model) but take
// no gradient and are not counted by Trainable.
type NCSNpp struct {
	Config NCSNppConfig
	Params *Params

	fourier        int // parameter index of the fixed Fourier weights (-1 if positional)
	dense0, dense1 int // weight indices (bias = index+1)
	convIn         int
	modules        []module // the level structure, in forward order
	normOut        int      // final GroupNorm weight index
	convOut        int

	drop      *rng.Stream // the training step of the dropout masks; nil in evaluation
	dropK     int         // dropouts so far in this forward pass
	dropFirst int         // the batch's first sample within a larger batch (SetDropoutFrom)
}

// ForwardBytesPerSample is NCSNppConfig.ForwardBytes of the network, saturated to int64.
func (n *NCSNpp) ForwardBytesPerSample() int64 {
	b := n.Config.ForwardBytes()
	if !(b < 1<<62) {
		return 1 << 62
	}
	return int64(b)
}

// module is one step of the forward pass over the level structure.
type module struct {
	kind    int // modRes, modAttn, modPyramid
	res     resBlock
	attn    int // GroupNorm weight index of an attention block
	pyramid int // weight index of a pyramid down-sampling conv
	// The skip stack: push appends h after the module (down path);
	// popCat joins the popped skip to the module's input, h first (up path).
	push, popCat bool
}

const (
	modRes = iota
	modAttn
	modPyramid
)

// resBlock is a ResnetBlockBigGANpp: parameter indices of its layers (each
// weight's bias follows it).
type resBlock struct {
	in, out              int
	up, down             bool
	gn0, conv0, dense    int
	gn1, conv1, convSkip int // convSkip -1 without a 1×1 skip conv
}

// paramBuilder lays out specs and remembers how to initialise each.
type paramBuilder struct {
	specs []Spec
	inits []func(dst []float32, r *rng.RNG)
}

func (b *paramBuilder) add(name string, shape []int, init func(dst []float32, r *rng.RNG)) int {
	b.specs = append(b.specs, Spec{name, shape})
	b.inits = append(b.inits, init)
	return len(b.specs) - 1
}

// defaultInit is score_sde's default_init(scale): VarianceScaling fan_avg,
// uniform, with scale 0 replaced by 1e-10 (docs/ncsnpp.md#initialisation):
// U(−a, a) with a = √(3·scale/((fanIn + fanOut)/2)). fanIn and
// fanOut include the receptive field.
func defaultInit(scale float64, fanIn, fanOut int) func([]float32, *rng.RNG) {
	if scale == 0 {
		scale = 1e-10
	}
	a := math.Sqrt(3 * scale / (float64(fanIn+fanOut) / 2))
	return func(dst []float32, r *rng.RNG) { r.FillUniform(dst, -a, a) }
}

func fill(v float32) func([]float32, *rng.RNG) {
	return func(dst []float32, _ *rng.RNG) {
		for i := range dst {
			dst[i] = v
		}
	}
}

// conv adds a conv weight [out, in, k, k] and zero bias; returns the weight index.
func (b *paramBuilder) conv(prefix string, in, out, k int, scale float64) int {
	i := b.add(prefix+".weight", []int{out, in, k, k}, defaultInit(scale, in*k*k, out*k*k))
	b.add(prefix+".bias", []int{out}, fill(0))
	return i
}

func (b *paramBuilder) linear(prefix string, in, out int) int {
	i := b.add(prefix+".weight", []int{out, in}, defaultInit(1, in, out))
	b.add(prefix+".bias", []int{out}, fill(0))
	return i
}

func (b *paramBuilder) groupNorm(prefix string, c int) int {
	i := b.add(prefix+".weight", []int{c}, fill(1))
	b.add(prefix+".bias", []int{c}, fill(0))
	return i
}

// nin adds an NIN layer: W (in, out), default_init(scale), zero bias.
func (b *paramBuilder) nin(prefix string, in, out int, scale float64) int {
	i := b.add(prefix+".W", []int{in, out}, defaultInit(scale, out, in))
	b.add(prefix+".b", []int{out}, fill(0))
	return i
}

func (b *paramBuilder) resBlock(idx, in, out, tembDim int, up, down bool) resBlock {
	p := fmt.Sprintf("all_modules.%d.", idx)
	r := resBlock{in: in, out: out, up: up, down: down, convSkip: -1}
	r.gn0 = b.groupNorm(p+"GroupNorm_0", in)
	r.conv0 = b.conv(p+"Conv_0", in, out, 3, 1)
	r.dense = b.linear(p+"Dense_0", tembDim, out)
	r.gn1 = b.groupNorm(p+"GroupNorm_1", out)
	r.conv1 = b.conv(p+"Conv_1", out, out, 3, 0)
	if in != out || up || down {
		r.convSkip = b.conv(p+"Conv_2", in, out, 1, 1)
	}
	return r
}

func (b *paramBuilder) attnBlock(idx, c int) int {
	p := fmt.Sprintf("all_modules.%d.", idx)
	i := b.groupNorm(p+"GroupNorm_0", c)
	for j := range 4 {
		scale := 0.1
		if j == 3 {
			scale = 0 // NIN_3: init_scale 0
		}
		b.nin(fmt.Sprintf("%sNIN_%d", p, j), c, c, scale)
	}
	return i
}

// NewNCSNpp builds the network of c and initialises it from r as score_sde
// does (distributions, not PyTorch's random stream).
func NewNCSNpp(c NCSNppConfig, r *rng.RNG) (*NCSNpp, error) {
	m, b, err := layoutNCSNpp(c)
	if err != nil {
		return nil, err
	}
	m.Params = NewParams(b.specs)
	for i, init := range b.inits {
		init(m.Params.Slice(m.Params.Data, i), r)
	}
	return m, nil
}

// layoutNCSNpp lays out the modules and parameter specs of c in score_sde's
// construction order (docs/ncsnpp.md#the-forward-pass).
func layoutNCSNpp(c NCSNppConfig) (*NCSNpp, *paramBuilder, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, err
	}
	m := &NCSNpp{Config: c, fourier: -1}
	b := &paramBuilder{}
	idx := 0
	next := func() int { idx++; return idx - 1 }
	nf := c.NF
	embedDim := nf
	if c.Embedding == EmbedFourier {
		scale := c.FourierScale
		m.fourier = b.add(fmt.Sprintf("all_modules.%d.W", next()), []int{nf}, func(dst []float32, r *rng.RNG) { r.FillNormal(dst, 0, scale) })
		embedDim = 2 * nf
	}
	m.dense0 = b.linear(fmt.Sprintf("all_modules.%d", next()), embedDim, 4*nf)
	m.dense1 = b.linear(fmt.Sprintf("all_modules.%d", next()), 4*nf, 4*nf)
	temb := 4 * nf
	m.convIn = b.conv(fmt.Sprintf("all_modules.%d", next()), c.InChannels, nf, 3, 1)

	levels := len(c.ChMult)
	hsC := []int{nf}
	in, pyrCh := nf, c.InChannels
	add := func(mod module) { m.modules = append(m.modules, mod) }
	for l := range levels {
		for range c.NumResBlocks {
			out := nf * c.ChMult[l]
			add(module{kind: modRes, res: b.resBlock(next(), in, out, temb, false, false)})
			in = out
			if c.attnAt(c.resolution(l)) {
				add(module{kind: modAttn, attn: b.attnBlock(next(), in)})
			}
			m.modules[len(m.modules)-1].push = true
			hsC = append(hsC, in)
		}
		if l != levels-1 {
			add(module{kind: modRes, res: b.resBlock(next(), in, in, temb, false, true), push: c.ProgressiveInput == ProgressiveNone})
			if c.ProgressiveInput == ProgressiveResidual {
				add(module{kind: modPyramid, pyramid: b.conv(fmt.Sprintf("all_modules.%d.Conv2d_0", next()), pyrCh, in, 3, 1), push: true})
				pyrCh = in
			}
			hsC = append(hsC, in)
		}
	}
	in = hsC[len(hsC)-1]
	add(module{kind: modRes, res: b.resBlock(next(), in, in, temb, false, false)})
	add(module{kind: modAttn, attn: b.attnBlock(next(), in)})
	add(module{kind: modRes, res: b.resBlock(next(), in, in, temb, false, false)})
	for l := levels - 1; l >= 0; l-- {
		for range c.NumResBlocks + 1 {
			out := nf * c.ChMult[l]
			skip := hsC[len(hsC)-1]
			hsC = hsC[:len(hsC)-1]
			add(module{kind: modRes, res: b.resBlock(next(), in+skip, out, temb, false, false), popCat: true})
			in = out
		}
		if c.attnAt(c.resolution(l)) {
			add(module{kind: modAttn, attn: b.attnBlock(next(), in)})
		}
		if l != 0 {
			add(module{kind: modRes, res: b.resBlock(next(), in, in, temb, true, false)})
		}
	}
	if len(hsC) != 0 {
		return nil, nil, fmt.Errorf("ncsnpp: internal error: %d skip connections left", len(hsC))
	}
	m.normOut = b.groupNorm(fmt.Sprintf("all_modules.%d", next()), in)
	m.convOut = b.conv(fmt.Sprintf("all_modules.%d", next()), in, c.OutChannels, 3, 0)
	return m, b, nil
}

// Trainable is the number of trained parameters (all but the fixed Fourier
// weights), as PyTorch's Σ numel over requires_grad parameters.
func (m *NCSNpp) Trainable() int {
	n := m.Params.Len()
	if m.fourier >= 0 {
		n -= len(m.Params.Slice(m.Params.Data, m.fourier))
	}
	return n
}

// SetDropout turns dropout on with the masks of training step s (see
// Dropouter) or off (s nil: evaluation).
func (m *NCSNpp) SetDropout(s *rng.Stream) { m.SetDropoutFrom(s, 0) }

// SetDropoutFrom is SetDropout for samples first, first+1, … of a larger batch (a data-parallel
// rank's): each sample's masks are the ones it has in the whole batch. first > 0 runs on the host
// only.
func (m *NCSNpp) SetDropoutFrom(s *rng.Stream, first int) { m.drop, m.dropK, m.dropFirst = s, 0, first }

// dropStream returns the stream of the next dropout of the forward pass (nil
// in evaluation).
func (m *NCSNpp) dropStream() *rng.Stream {
	if m.drop == nil {
		return nil
	}
	s := rng.Stream{Key: m.drop.Key, Step: m.drop.Step, ID: rng.DropoutStream(m.dropK)}
	m.dropK++
	return &s
}

// Embed returns the time embedding input (B, 2nf or nf) of times t.
func (m *NCSNpp) Embed(t []float32) *tensor.Tensor {
	if m.fourier >= 0 {
		return FourierEmbedding(t, m.Params.Slice(m.Params.Data, m.fourier))
	}
	return PositionalEmbedding(t, m.Config.NF)
}

const invSqrt2 = float32(1 / math.Sqrt2)

// Forward maps x (B, InChannels, H, W) and times t (B values) to
// (B, OutChannels, H, W).
func (m *NCSNpp) Forward(g *autograd.Tape, x *autograd.Value, t []float32) *autograd.Value {
	return m.forward(g, x, tensor.FromSlice(t, len(t)))
}

// embedOn returns the time embedding of the times t (B) on t's device (the fused ops
// tensor.FourierEmbedding and tensor.PositionalEmbedding).
func (m *NCSNpp) embedOn(g *autograd.Tape, t *tensor.Tensor) *tensor.Tensor {
	if m.fourier >= 0 {
		w := m.Params.Value(m.fourier).T
		return tensor.FourierEmbedding(g.Temp(t.Len(), 2*w.Len()), t, w.Reshape(w.Len()))
	}
	return tensor.PositionalEmbedding(g.Temp(t.Len(), m.Config.NF), t, m.Config.NF)
}

// forward is Forward with the times as a tensor on the network's device.
func (m *NCSNpp) forward(g *autograd.Tape, x *autograd.Value, t *tensor.Tensor) *autograd.Value {
	c := m.Config
	if s := x.Shape(); len(s) != 4 || s[1] != c.InChannels || s[2] != c.ImageSize || s[3] != c.ImageSize || s[0] != t.Len() {
		panic(fmt.Sprintf("ncsnpp: input %v with %d times, want (B, %d, %d, %d)", s, t.Len(), c.InChannels, c.ImageSize, c.ImageSize))
	}
	p := m.Params.Value
	m.dropK = 0
	emb := g.Const(m.embedOn(g, t))
	temb := g.Linear(emb, p(m.dense0), p(m.dense0+1))
	temb = g.Linear(g.SiLU(temb), p(m.dense1), p(m.dense1+1))
	actTemb := g.SiLU(temb) // every res-block applies act(temb) first

	pyramid := x
	h := g.Conv2d(x, p(m.convIn), p(m.convIn+1), 1, 1)
	hs := []*autograd.Value{h}
	for _, mod := range m.modules {
		switch mod.kind {
		case modRes:
			if mod.popCat {
				h = g.Concat(1, h, hs[len(hs)-1])
				hs = hs[:len(hs)-1]
			}
			h = m.resForward(g, mod.res, h, actTemb)
		case modAttn:
			h = m.attnForward(g, mod.attn, h)
		case modPyramid:
			pyramid = g.Conv2d(g.UpFIRDn2d(pyramid, tensor.FIRBlur), p(mod.pyramid), p(mod.pyramid+1), 2, 0)
			pyramid = g.AddScaled(pyramid, h, invSqrt2)
			h = pyramid
		}
		if mod.push {
			hs = append(hs, h)
		}
	}
	if len(hs) != 0 {
		panic(fmt.Sprintf("ncsnpp: %d skip connections left after the forward pass", len(hs)))
	}
	h = m.groupNormSiLU(g, m.normOut, h)
	return g.Conv2d(h, p(m.convOut), p(m.convOut+1), 1, 1)
}

func (m *NCSNpp) groupNorm(g *autograd.Tape, i int, x *autograd.Value) *autograd.Value {
	return g.GroupNorm(x, m.Params.Value(i), m.Params.Value(i+1), tensor.GroupNormGroups(x.Shape()[1]), 1e-6)
}

// groupNormSiLU is act(GroupNorm(x)) as one fused node (autograd.Tape.GroupNormSiLU).
func (m *NCSNpp) groupNormSiLU(g *autograd.Tape, i int, x *autograd.Value) *autograd.Value {
	return g.GroupNormSiLU(x, m.Params.Value(i), m.Params.Value(i+1), tensor.GroupNormGroups(x.Shape()[1]), 1e-6)
}

func (m *NCSNpp) resample(g *autograd.Tape, x *autograd.Value, up bool) *autograd.Value {
	if m.Config.FIR {
		if up {
			return g.UpFIRDn2d(x, tensor.FIRUpsample)
		}
		return g.UpFIRDn2d(x, tensor.FIRDownsample)
	}
	s := x.Shape()
	n, ch, hh, ww := s[0], s[1], s[2], s[3]
	if up { // nearest ×2: broadcast against ones
		ones := g.Const(tensor.Full(1, 1, 1, 1, 2, 1, 2))
		return g.Reshape(g.Mul(g.Reshape(x, n, ch, hh, 1, ww, 1), ones), n, ch, 2*hh, 2*ww)
	}
	return g.Reshape(g.Mean(g.Reshape(x, n, ch, hh/2, 2, ww/2, 2), 3, 5), n, ch, hh/2, ww/2)
}

// resForward is ResnetBlockBigGANpp (docs/ncsnpp.md#residual-block).
func (m *NCSNpp) resForward(g *autograd.Tape, r resBlock, x, actTemb *autograd.Value) *autograd.Value {
	p := m.Params.Value
	h := m.groupNormSiLU(g, r.gn0, x)
	if r.up || r.down {
		h, x = m.resample(g, h, r.up), m.resample(g, x, r.up)
	}
	// The time embedding joins Conv_0's bias: Conv_0's own bias (out) plus the per-sample
	// projection (N, out), summed and added in the convolution's output pass (one op, no
	// separate add of the two or over the feature map).
	d := g.Linear(actTemb, p(r.dense), p(r.dense+1))
	h = g.Conv2dTwoBias(h, p(r.conv0), p(r.conv0+1), d, 1, 1)
	// GroupNorm_1, its act and the dropout as one op (the mask applied as the output is written and
	// regenerated in the backward pass as dy is read); GroupNormSiLU in evaluation.
	h = g.GroupNormSiLUDropout(h, p(r.gn1), p(r.gn1+1), tensor.GroupNormGroups(h.Shape()[1]), 1e-6,
		m.Config.Dropout, m.dropStream(), m.dropFirst*(h.T.Len()/max(1, h.T.Shape()[0])))
	if r.convSkip >= 0 {
		x = g.Conv2d(x, p(r.convSkip), p(r.convSkip+1), 1, 0)
	}
	// Conv_1 and the residual join (x + h)/√2 in one op: the join in the convolution's output
	// pass, with AddScaled's rounding.
	return g.Conv2dResidual(h, p(r.conv1), p(r.conv1+1), x, invSqrt2, 1, 1)
}

// nin is a per-pixel linear layer with W (in, out): a 1×1 convolution with
// the transposed weight.
func (m *NCSNpp) nin(g *autograd.Tape, i int, x *autograd.Value) *autograd.Value {
	w := m.Params.Value(i)
	in, out := w.Shape()[0], w.Shape()[1]
	return g.Conv2d(x, g.Reshape(g.Transpose(w), out, in, 1, 1), m.Params.Value(i+1), 1, 0)
}

// attnForward is AttnBlockpp (docs/ncsnpp.md#attention-block); i is its GroupNorm index,
// NIN_j follows at i+2+2j.
func (m *NCSNpp) attnForward(g *autograd.Tape, i int, x *autograd.Value) *autograd.Value {
	s := x.Shape()
	n, c, hw := s[0], s[1], s[2]*s[3]
	h := m.groupNorm(g, i, x)
	q := g.Reshape(m.nin(g, i+2, h), n, c, hw)
	k := g.Reshape(m.nin(g, i+4, h), n, c, hw)
	v := g.Reshape(m.nin(g, i+6, h), n, c, hw)
	o := m.nin(g, i+8, g.Reshape(g.Attention(q, k, v), s...))
	return g.AddScaled(x, o, invSqrt2)
}
