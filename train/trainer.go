// Package train runs optimisation: a Trainer owns a model's flat parameters,
// Adam, the EMA of the weights, the random stream and the step counter, and
// saves all of them in one safetensors checkpoint so that a resumed run
// continues bit-exactly.
package train

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"

	"holdgo/autograd"
	"holdgo/checkpoint"
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/tensor"
)

// Options are the optimisation settings.
type Options struct {
	Steps    int     `json:"steps"`
	Batch    int     `json:"batch"`
	LR       float64 `json:"lr"`
	Warmup   int     `json:"warmup"`    // linear warm-up steps (0: none)
	GradClip float64 `json:"grad_clip"` // global-norm clipping (0: none)
	EMA      float64 `json:"ema"`       // EMA rate
	Seed     uint64  `json:"seed"`
}

// Validate reports the first bad setting with what to do about it.
func (o Options) Validate() error {
	switch {
	case o.Steps < 0:
		return fmt.Errorf("steps must be ≥ 0, got %d", o.Steps)
	case o.Batch < 1:
		return fmt.Errorf("batch must be ≥ 1, got %d", o.Batch)
	case !(o.LR > 0) || math.IsInf(o.LR, 0):
		return fmt.Errorf("lr must be positive and finite, got %g", o.LR)
	case o.Warmup < 0:
		return fmt.Errorf("warmup must be ≥ 0, got %d", o.Warmup)
	case !(o.GradClip >= 0) || math.IsInf(o.GradClip, 0):
		return fmt.Errorf("grad-clip must be finite and ≥ 0 (0 disables it), got %g", o.GradClip)
	case !(o.EMA >= 0 && o.EMA < 1):
		return fmt.Errorf("ema must be in [0, 1), got %g", o.EMA)
	}
	return nil
}

// LossFunc records one batch's loss on the tape. It draws everything random
// (data, times, noise) from rng, which the trainer checkpoints.
type LossFunc func(g *autograd.Tape, rng *tensor.RNG) (*autograd.Value, error)

// Stats describe one step.
type Stats struct {
	Step     int // steps done after this one
	Loss     float64
	LR       float64
	GradNorm float64
}

// ErrNonFinite is returned (wrapped) when a loss or gradient is NaN or Inf.
var ErrNonFinite = errors.New("non-finite loss or gradient")

// Trainer performs optimisation steps on a parameter set.
type Trainer struct {
	Opt    Options
	Params *layers.Params
	Adam   *optim.Adam
	EMA    *optim.EMA
	RNG    *tensor.RNG
	Step   int

	loss LossFunc
	tape *autograd.Tape
}

// New returns a trainer at step 0 with the random stream seeded from opt.Seed.
func New(opt Options, params *layers.Params, loss LossFunc) (*Trainer, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	return &Trainer{
		Opt: opt, Params: params, loss: loss,
		Adam: optim.NewAdam(params.Len()), EMA: optim.NewEMA(opt.EMA, params.Data),
		RNG: tensor.NewRNG(opt.Seed), tape: autograd.NewTape(tensor.CPU),
	}, nil
}

// TrainStep runs one step: loss, backward, clipping, Adam with the warm-up
// learning rate, EMA. A non-finite loss or gradient leaves the parameters,
// optimizer and EMA as they were and returns an error wrapping ErrNonFinite.
func (t *Trainer) TrainStep() (Stats, error) {
	t.tape.Reset()
	t.Params.ZeroGrad()
	l, err := t.loss(t.tape, t.RNG)
	if err != nil {
		return Stats{}, fmt.Errorf("step %d: %w", t.Step+1, err)
	}
	loss := float64(l.T.Item())
	if math.IsNaN(loss) || math.IsInf(loss, 0) {
		return Stats{}, fmt.Errorf("step %d: loss is %v: %w", t.Step+1, loss, ErrNonFinite)
	}
	t.tape.Backward(l)
	norm := optim.ClipGradNorm(t.Params.Grad, t.Opt.GradClip)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return Stats{}, fmt.Errorf("step %d: gradient norm is %v: %w", t.Step+1, norm, ErrNonFinite)
	}
	lr := optim.WarmupLR(t.Opt.LR, t.Step, t.Opt.Warmup)
	t.Adam.Update(t.Params.Data, t.Params.Grad, lr)
	t.EMA.Update(t.Params.Data)
	t.Step++
	return Stats{Step: t.Step, Loss: loss, LR: lr, GradNorm: norm}, nil
}

// Checkpoint tensor names: the parameters under their own names, then the
// EMA weights and Adam's moments under these prefixes.
const (
	prefixEMA   = "ema."
	prefixAdamM = "adam_m."
	prefixAdamV = "adam_v."
	keyRNG      = "rng"
	keyAdamStep = "adam_step"
	keyEMASteps = "ema_updates"
)

// Save writes the full training state to path atomically. meta carries the
// caller's configuration (model, SDE, data) and is stored alongside.
func (t *Trainer) Save(path string, meta map[string]string) error {
	specs := t.Params.Specs()
	ts := make([]checkpoint.Tensor, 0, 4*len(specs))
	for _, buf := range []struct {
		prefix string
		data   []float32
	}{{"", t.Params.Data}, {prefixEMA, t.EMA.Shadow}, {prefixAdamM, t.Adam.M}, {prefixAdamV, t.Adam.V}} {
		for i, s := range specs {
			ts = append(ts, checkpoint.Tensor{Name: buf.prefix + s.Name, Shape: s.Shape, Data: t.Params.Slice(buf.data, i)})
		}
	}
	m := make(map[string]string, len(meta)+4)
	for k, v := range meta {
		m[k] = v
	}
	rng, err := t.RNG.MarshalBinary()
	if err != nil {
		return err
	}
	m[keyRNG] = base64.StdEncoding.EncodeToString(rng)
	m[keyAdamStep] = fmt.Sprint(t.Adam.Step)
	m[keyEMASteps] = fmt.Sprint(t.EMA.Updates)
	checkpoint.SetStep(m, int64(t.Step))
	if err := checkpoint.SetJSON(m, "train", t.Opt); err != nil {
		return err
	}
	return checkpoint.Save(path, ts, m)
}

// LoadWeights copies the model weights (EMA weights if ema) of a checkpoint
// into params, checking every name and shape.
func LoadWeights(f *checkpoint.File, params *layers.Params, ema bool) error {
	prefix := ""
	if ema {
		prefix = prefixEMA
	}
	for i, s := range params.Specs() {
		if err := f.Into(prefix+s.Name, params.Slice(params.Data, i), s.Shape...); err != nil {
			return err
		}
	}
	return nil
}

// Restore loads the training state saved by Save into t (whose parameters
// must have the checkpoint's layout). The options in t are kept.
func (t *Trainer) Restore(f *checkpoint.File) error {
	for _, buf := range []struct {
		prefix string
		data   []float32
	}{{"", t.Params.Data}, {prefixEMA, t.EMA.Shadow}, {prefixAdamM, t.Adam.M}, {prefixAdamV, t.Adam.V}} {
		for i, s := range t.Params.Specs() {
			if err := f.Into(buf.prefix+s.Name, t.Params.Slice(buf.data, i), s.Shape...); err != nil {
				return err
			}
		}
	}
	step, err := f.Step()
	if err != nil {
		return err
	}
	raw, err := base64.StdEncoding.DecodeString(f.Meta[keyRNG])
	if err != nil || len(raw) == 0 {
		return fmt.Errorf("checkpoint %s: no valid random-stream state (key %q); it cannot be resumed", f.Path, keyRNG)
	}
	if err := t.RNG.UnmarshalBinary(raw); err != nil {
		return fmt.Errorf("checkpoint %s: %w", f.Path, err)
	}
	if _, err := fmt.Sscan(f.Meta[keyAdamStep], &t.Adam.Step); err != nil {
		return fmt.Errorf("checkpoint %s: bad %s: %w", f.Path, keyAdamStep, err)
	}
	if _, err := fmt.Sscan(f.Meta[keyEMASteps], &t.EMA.Updates); err != nil {
		return fmt.Errorf("checkpoint %s: bad %s: %w", f.Path, keyEMASteps, err)
	}
	t.Step = int(step)
	return nil
}
