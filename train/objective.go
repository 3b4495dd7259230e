package train

import (
	"fmt"
	"math"

	"holdgo/autograd"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// Time samplers of the training loss.
const (
	// TimesUniform is t ~ U[t_min, T], the paper's and CLD-SGM's choice.
	TimesUniform = "uniform"
	// TimesMixed draws half of each batch from U[t_min, T] and half
	// log-uniformly on [t_min, T]: the same per-time optimum (the exact
	// score), more samples where the data's fine structure is resolved.
	TimesMixed = "mixed"
)

// sampleTimes fills dst with training times of the given scheme.
func sampleTimes(sde *hold.SDE, scheme string, dst []float64, r *rng.RNG) {
	sde.SampleTimes(dst, r)
	if scheme != TimesMixed {
		return
	}
	lo, hi := math.Log(sde.MinTime()), math.Log(sde.Horizon())
	for i := 1; i < len(dst); i += 2 {
		dst[i] = math.Exp(lo + (hi-lo)*r.Float64())
	}
}

// DataFunc fills dst (batch × d, row-major) with a fresh data batch.
type DataFunc func(r *rng.RNG, dst []float32)

// ScoreLoss is the score-matching loss of an SDE for a score network: per
// batch it draws q0 from data, t ~ U[t_min, T] in float64 and ε ~ N(0, I),
// forms x_t and the target with the SDE's fused reparameterisation (BCSM or
// DSM as the SDE's objective says) and records ‖E_θ(x_t, t) − target‖²,
// summed over dimensions and averaged over the batch. Buffers are reused
// across steps.
func ScoreLoss(sde *hold.SDE, net layers.ScoreNet, data DataFunc, batch, dim int, times string) (LossFunc, error) {
	switch times {
	case "", TimesUniform, TimesMixed:
	default:
		return nil, fmt.Errorf("unknown time sampling %q (want %s or %s)", times, TimesUniform, TimesMixed)
	}
	n := sde.Blocks()
	if state, out := net.Widths(); state != n*dim || out != dim {
		return nil, fmt.Errorf("score network maps a state of %d values to %d, but a %d-block SDE on %d-dimensional data needs %d → %d",
			state, out, n, dim, n*dim, dim)
	}
	dropout, _ := net.(layers.Dropouter)
	b := hold.Batch{
		Data: make([]float32, batch*dim), Times: make([]float64, batch), Noise: make([]float32, batch*n*dim),
		State: make([]float32, batch*n*dim), Target: make([]float32, batch*dim),
	}
	dsm := sde.Config().Objective == hold.ObjectiveDSM && n > 1
	if dsm {
		b.Aux = make([]float32, batch*(n-1)*dim)
	}
	x, tt := tensor.FromSlice(b.State, batch, n*dim), tensor.Zeros(batch)
	grad := tensor.Zeros(batch, dim)
	return func(g *autograd.Tape, r *rng.RNG) (*autograd.Value, error) {
		data(r, b.Data)
		sampleTimes(sde, times, b.Times, r)
		r.FillNormal(b.Noise, 0, 1)
		if dsm {
			r.FillNormal(b.Aux, 0, 1)
		}
		if err := sde.Perturb(b); err != nil {
			return nil, err
		}
		for i, t := range b.Times {
			tt.Data()[i] = float32(t)
		}
		if dropout != nil { // masks from the trainer's stream: resumes stay bit-exact
			dropout.SetDropout(r)
			defer dropout.SetDropout(nil)
		}
		out := net.ScoreForward(g, g.Const(x), g.Const(tt))
		loss, err := hold.Loss(grad.Data(), out.T.Data(), b.Target, batch)
		if err != nil {
			return nil, err
		}
		return g.ScalarLoss("ScoreLoss", out, float32(loss), grad), nil
	}, nil
}

// NetworkScorer turns a trained score network into a hold.Scorer: the last
// block's score ℓ_t·E_θ(x, t), evaluated without recording gradients.
type NetworkScorer struct {
	SDE *hold.SDE
	Net layers.ScoreNet

	tape *autograd.Tape
	x, t *tensor.Tensor
	out  []float32
}

// Score implements hold.Scorer for x (B × n·d) at per-sample times t.
func (s *NetworkScorer) Score(dst, x, t []float64) error {
	batch := len(t)
	if batch == 0 {
		return nil
	}
	width := len(x) / batch
	if state, d := s.Net.Widths(); width*batch != len(x) || width != state || len(dst) != batch*d {
		return fmt.Errorf("network scorer: state %d, times %d, scores %d do not fit a network from %d to %d values",
			len(x), batch, len(dst), state, d)
	}
	if s.tape == nil {
		s.tape = autograd.NewTape(tensor.CPU)
		s.tape.SetNoGrad(true)
	}
	if s.x == nil || s.x.Len() != len(x) {
		s.x, s.t = tensor.Zeros(batch, width), tensor.Zeros(batch)
		s.out = make([]float32, len(dst))
	}
	for i, v := range x {
		s.x.Data()[i] = float32(v)
	}
	for i, v := range t {
		s.t.Data()[i] = float32(v)
	}
	s.tape.Reset()
	out := s.Net.ScoreForward(s.tape, s.tape.Const(s.x), s.tape.Const(s.t))
	copy(s.out, out.T.Data())
	return s.SDE.ScoreFromOutput(dst, s.out, t)
}

// ScoreVJP writes the last-block score (if score is non-nil) and the
// vector–Jacobian product uᵀ·∂S/∂x (B × n·d) for S = ℓ_t·E_θ(x, t): one
// forward and one backward pass of the network (sample.DivScorer).
func (s *NetworkScorer) ScoreVJP(score, vjp, x, u, t []float64) error {
	batch := len(t)
	if batch == 0 {
		return nil
	}
	width, d := s.Net.Widths()
	if len(x) != batch*width || len(u) != batch*d || len(vjp) != len(x) || (score != nil && len(score) != batch*d) {
		return fmt.Errorf("network scorer: VJP shapes: x %d, u %d, vjp %d for batch %d of a network from %d to %d values",
			len(x), len(u), len(vjp), batch, width, d)
	}
	g := autograd.NewTape(tensor.CPU)
	xt, tt := tensor.Zeros(batch, width), tensor.Zeros(batch)
	for i, v := range x {
		xt.Data()[i] = float32(v)
	}
	for i, v := range t {
		tt.Data()[i] = float32(v)
	}
	xv := g.Var(xt)
	out := s.Net.ScoreForward(g, xv, g.Const(tt))
	// Seed with ℓ_t·u so that the pull-back is uᵀ∂(ℓ_t E)/∂x. The
	// parameters' gradients are not wanted: save and restore them.
	grads := s.Net.Parameters().Grad
	saved := append([]float32(nil), grads...)
	defer copy(grads, saved)
	seed := tensor.Zeros(batch, d)
	for b, tb := range t {
		ell := s.SDE.Ell(tb)
		for i := range d {
			seed.Data()[b*d+i] = float32(ell * u[b*d+i])
		}
	}
	out.Grad = seed
	g.BackwardFrom(out)
	for i, v := range xv.Grad.Data() {
		vjp[i] = float64(v)
	}
	if score != nil {
		o := make([]float32, batch*d)
		copy(o, out.T.Data())
		return s.SDE.ScoreFromOutput(score, o, t)
	}
	return nil
}
