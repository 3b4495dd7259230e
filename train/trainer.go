// Package train runs optimisation: a Trainer owns a model's flat parameters,
// Adam, the EMA of the weights, the random stream and the step counter, and
// saves all of them in one safetensors checkpoint so that a resumed run
// continues bit-exactly.
//
// A step runs the same ops on every device, the CPU included (Trainer.Advance):
// the loss function's forward pass and loss (tensor.ScoreLoss, or a one-element
// loss value), the backward pass, tensor.SumSq, tensor.Adam and tensor.EMA. The
// loss, the gradient norm and a count of skipped steps stay in the step
// statistics on the device until Trainer.Read.
//
// Non-finite steps: a step whose loss or gradient norm is NaN or Inf (on any
// rank of data-parallel training, whose losses are all-reduced) changes neither
// the parameters nor Adam's moments nor the EMA weights, but it counts as a step:
// Trainer.Step and the Adam and EMA counters advance, because the step was
// issued without waiting for the device. The read that follows reports it with
// an error wrapping ErrNonFinite: TrainStep's at once, Advance(false)'s at the
// next Read. The training loop (Run) stops there and keeps the last good
// checkpoint, so a skipped step is never saved.
package train

import (
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"time"

	"holdgo/autograd"
	"holdgo/checkpoint"
	"holdgo/dist"
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/rng"
	"holdgo/tensor"
)

// Options are the optimisation settings.
type Options struct {
	Steps    int     `json:"steps"`
	Batch    int     `json:"batch"`
	LR       float64 `json:"lr"`
	Warmup   int     `json:"warmup"`          // linear warm-up steps (0: none)
	Decay    string  `json:"decay,omitempty"` // learning-rate decay: "" or optim.DecayNone (constant), optim.DecayCosine (to 0 at Steps)
	GradClip float64 `json:"grad_clip"`       // global-norm clipping (0: none)
	EMA      float64 `json:"ema"`             // EMA rate
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
	case o.Decay != "" && o.Decay != optim.DecayNone && o.Decay != optim.DecayCosine:
		return fmt.Errorf("lr-decay must be %s or %s, got %q", optim.DecayNone, optim.DecayCosine, o.Decay)
	case !(o.GradClip >= 0) || math.IsInf(o.GradClip, 0):
		return fmt.Errorf("grad-clip must be finite and ≥ 0 (0 disables it), got %g", o.GradClip)
	case !(o.EMA >= 0 && o.EMA < 1):
		return fmt.Errorf("ema must be in [0, 1), got %g", o.EMA)
	}
	return nil
}

// LossFunc records one batch's loss on the tape of c, on c.Device. It draws the
// data from c.RNG (checkpointed) and everything else random (times, noise,
// dropout) from the counter-based streams c.Stream(id), which depend only on the
// seed and the step. It returns either the network output with its gradient
// already seeded and the loss reduced into c.Stats (tensor.ScoreLoss), or a
// one-element loss value, which the trainer reads (one copy to the host) and
// differentiates.
type LossFunc func(c *StepContext) (*autograd.Value, error)

// StepContext is what a LossFunc sees of a training step.
type StepContext struct {
	Tape *autograd.Tape
	RNG  *tensor.RNG
	Seed uint64
	Step int // steps done before this one

	// Device is where the step runs; the loss goes into the step statistics Stats
	// (tensor.StatsLen slots on Device).
	Device tensor.Device
	Stats  *tensor.Tensor
}

// Stream is the counter-based stream id of this step.
func (c *StepContext) Stream(id uint32) rng.Stream {
	return rng.Stream{Key: c.Seed, Step: uint32(c.Step), ID: id}
}

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
//
// The parameters, gradients, Adam moments and EMA weights live in flat tensors
// on the trainer's device (SetDevice; the CPU by default) and a step runs there
// without a host synchronisation (see the package documentation). On the CPU,
// Params.Data, Adam.M, Adam.V and EMA.Shadow are those tensors' memory; on
// another device they are host copies that Save downloads, so checkpoints are
// the same on every device.
type Trainer struct {
	Opt    Options
	Params *layers.Params
	Adam   *optim.Adam
	EMA    *optim.EMA
	RNG    *tensor.RNG
	Step   int
	// StepBytes estimates the memory a step's activations take (NCSN++: NCSNppConfig.TrainBytes of the
	// rank's shard; 0 where unknown), for a check against the memory budget where the device's memory
	// is the host's.
	StepBytes float64

	loss  LossFunc
	tape  *autograd.Tape
	ctx   StepContext
	state deviceState
	comm  dist.Communicator // nil or one rank: no communication
	// dcomm sums the gradients in device memory instead of comm's host all-reduce (bucket.go).
	dcomm       dist.DeviceComm
	bucketBytes int
	bk          bucketing
	// reduceTime is the wall time spent in the steps' all-reduce calls (with the wait for
	// the slowest rank).
	reduceTime time.Duration
}

// ReduceTime is the wall time the steps spent in the all-reduce so far
// (including the wait for the slowest rank; 0 on one rank).
func (t *Trainer) ReduceTime() time.Duration { return t.reduceTime }

// deviceState is the optimizer state on the trainer's device.
type deviceState struct {
	dev          tensor.Device
	m, v, shadow *tensor.Tensor // Adam's moments and the EMA weights
	stats        *tensor.Tensor // the step statistics (tensor.StatsLen slots)
	host         []float32      // their host copy for the all-reduce
	last         Stats          // the last step's host-side numbers (step, learning rate)
}

// New returns a trainer at step 0 with the random stream seeded from opt.Seed.
func New(opt Options, params *layers.Params, loss LossFunc) (*Trainer, error) {
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	if err := params.Download(); err != nil {
		return nil, err
	}
	t := &Trainer{
		Opt: opt, Params: params, loss: loss,
		Adam: optim.NewAdam(params.Len()), EMA: optim.NewEMA(opt.EMA, params.Data),
		RNG: rng.New(opt.Seed),
	}
	return t, t.bind(params.Device())
}

// SetComm makes t one rank of data-parallel training over c: its loss
// function computes the rank's shard of the global batch (ShardScoreLoss),
// and every step sums the ranks' gradients, losses and non-finite counts
// with one all-reduce before clipping, so Adam and the EMA see the
// global-batch gradient on every rank. Call Broadcast before the first step.
func (t *Trainer) SetComm(c dist.Communicator) { t.comm = c }

// parallel reports whether steps communicate.
func (t *Trainer) parallel() bool { return t.comm != nil && t.comm.Size() > 1 }

// Broadcast copies rank 0's training state (parameters, Adam's moments and
// step, EMA weights and count, random stream, step) to every rank: after
// New, Restore on rank 0 (the others need not read the checkpoint), before
// SetDevice.
func (t *Trainer) Broadcast() error {
	if !t.parallel() {
		return nil
	}
	if err := t.download(); err != nil {
		return err
	}
	for _, buf := range [][]float32{t.Params.Data, t.Adam.M, t.Adam.V, t.EMA.Shadow} {
		if err := t.comm.BcastF32(buf, 0); err != nil {
			return fmt.Errorf("broadcast the training state: %w", err)
		}
	}
	raw, err := t.RNG.MarshalBinary()
	if err != nil {
		return err
	}
	if err := t.comm.BcastBytes(raw, 0); err != nil {
		return fmt.Errorf("broadcast the random stream: %w", err)
	}
	if err := t.RNG.UnmarshalBinary(raw); err != nil {
		return err
	}
	counts := []float64{float64(t.Step), float64(t.Adam.Step), float64(t.EMA.Updates)}
	if err := t.comm.BcastF64(counts, 0); err != nil {
		return fmt.Errorf("broadcast the step counts: %w", err)
	}
	t.Step, t.Adam.Step, t.EMA.Updates = int(counts[0]), int(counts[1]), int(counts[2])
	return t.upload()
}

// allreduce sums buf = [gradients, loss, non-finite count] over the ranks
// (one call) and returns the summed loss and count.
func (t *Trainer) allreduce(buf []float32, loss float64, bad bool) (float64, int, error) {
	n := t.Params.Len()
	buf[n], buf[n+1] = float32(loss), 0
	if bad {
		buf[n], buf[n+1] = 0, 1
	}
	start := time.Now()
	err := t.comm.AllreduceF32(buf)
	t.reduceTime += time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("step %d: all-reduce of the gradients: %w", t.Step+1, err)
	}
	return float64(buf[n]), int(buf[n+1]), nil
}

// Device is where the trainer's state lives.
func (t *Trainer) Device() tensor.Device { return t.state.dev }

// SetDevice moves the training state (parameters, Adam's moments, EMA
// weights) to dev, copying its current values: call it after New and
// Restore. A step runs the op list and its fused families (tensor/fused.go),
// which the device implements or refuses with tensor.ErrUnsupported.
func (t *Trainer) SetDevice(dev tensor.Device) error {
	if dev == t.Device() {
		return nil
	}
	if err := t.download(); err != nil {
		return err
	}
	if err := t.Params.ToDevice(dev); err != nil {
		return err
	}
	return t.bind(dev)
}

// bind puts the optimizer state on dev (where the parameters are), copying the host values (on the
// CPU the tensors are their memory).
func (t *Trainer) bind(dev tensor.Device) error {
	g := deviceState{dev: dev, host: make([]float32, tensor.StatsLen)}
	var err error
	for _, b := range []struct {
		dst  **tensor.Tensor
		host []float32
	}{{&g.m, t.Adam.M}, {&g.v, t.Adam.V}, {&g.shadow, t.EMA.Shadow}} {
		if *b.dst, err = tensor.FromSlice(b.host, len(b.host)).ToDevice(dev); err != nil {
			return fmt.Errorf("optimizer state to %s: %w", dev.Name(), err)
		}
	}
	g.stats = tensor.New(dev, tensor.StatsLen)
	if err := g.stats.Err(); err != nil {
		return err
	}
	t.state, t.tape = g, autograd.NewTape(dev)
	return nil
}

// optimizerState pairs the device tensors of the optimizer state with their host copies.
func (t *Trainer) optimizerState() [3]struct {
	dev  *tensor.Tensor
	host []float32
} {
	g := &t.state
	return [3]struct {
		dev  *tensor.Tensor
		host []float32
	}{{g.m, t.Adam.M}, {g.v, t.Adam.V}, {g.shadow, t.EMA.Shadow}}
}

// download brings the host copies of the state up to date (nothing to copy on the CPU).
func (t *Trainer) download() error {
	if err := t.Params.Download(); err != nil {
		return err
	}
	for _, b := range t.optimizerState() {
		if err := b.dev.Buffer().Read(b.host); err != nil {
			return fmt.Errorf("optimizer state from %s: %w", t.state.dev.Name(), err)
		}
	}
	return nil
}

// upload sends the host state to the device (after Restore; nothing to copy on the CPU).
func (t *Trainer) upload() error {
	if err := t.Params.Upload(); err != nil {
		return err
	}
	for _, b := range t.optimizerState() {
		if err := b.dev.Buffer().Write(b.host); err != nil {
			return fmt.Errorf("optimizer state to %s: %w", t.state.dev.Name(), err)
		}
	}
	return nil
}

// TrainStep runs one step: loss, backward, clipping, Adam with the warm-up
// learning rate, EMA, and returns its loss and gradient norm (Advance(true)).
// A non-finite loss or gradient leaves the parameters, Adam's moments and the
// EMA as they were, counts the step and returns an error wrapping
// ErrNonFinite.
func (t *Trainer) TrainStep() (Stats, error) { return t.Advance(true) }

// Advance runs one step like TrainStep. With read false it does not wait for
// the step: the returned Stats carry the step and learning rate but no loss
// or norm (call Read for them).
func (t *Trainer) Advance(read bool) (Stats, error) {
	st, err := t.advance(read)
	if err != nil && t.deviceParallel() && !errors.Is(err, dist.ErrPeer) {
		// The other ranks may wait in a reduction of this step: stop them.
		t.dcomm.Fail(err)
	}
	return st, err
}

func (t *Trainer) advance(read bool) (Stats, error) {
	g := &t.state
	t.tape.Reset()
	t.Params.ZeroGrad()
	t.ctx = StepContext{Tape: t.tape, RNG: t.RNG, Seed: t.Opt.Seed, Step: t.Step, Device: g.dev, Stats: g.stats}
	if t.deviceParallel() {
		if err := t.armBuckets(); err != nil {
			return Stats{}, fmt.Errorf("step %d: %w", t.Step+1, err)
		}
	}
	l, err := t.loss(&t.ctx)
	if err != nil {
		return Stats{}, fmt.Errorf("step %d: %w", t.Step+1, err)
	}
	if err := tensor.Err(l.T, l.Grad); err != nil { // the forward pass or the loss failed on the device
		return Stats{}, fmt.Errorf("step %d: %w", t.Step+1, err)
	}
	if l.Grad == nil { // a one-element loss value: into the statistics, then its gradient
		if err := t.readLossValue(l); err != nil {
			return Stats{}, err
		}
		t.tape.Backward(l)
	} else {
		t.tape.BackwardFrom(l)
	}
	if err := t.Params.GradErr(); err != nil {
		return Stats{}, fmt.Errorf("step %d: backward: %w", t.Step+1, err)
	}
	switch {
	case t.deviceParallel():
		if err := t.finishBuckets(); err != nil {
			return Stats{}, err
		}
	case t.parallel():
		if err := t.reduce(); err != nil {
			return Stats{}, err
		}
	}
	tensor.SumSq(g.stats, t.Params.DevGrad)
	lr := t.lr()
	a := t.Adam
	tensor.Adam(t.Params.DevData, t.Params.DevGrad, g.m, g.v, g.stats,
		tensor.AdamStep{Beta1: a.Beta1, Beta2: a.Beta2, Eps: a.Eps, LR: lr, Step: a.Step + 1, MaxNorm: t.Opt.GradClip})
	tensor.EMA(g.shadow, t.Params.DevData, g.stats, t.EMA.NextDecay())
	if err := tensor.Err(g.stats, t.Params.DevData, g.shadow); err != nil {
		return Stats{}, fmt.Errorf("step %d: %w", t.Step+1, err)
	}
	a.Step++
	t.EMA.Updates++
	t.Step++
	g.last = Stats{Step: t.Step, LR: lr}
	if !read {
		return g.last, nil
	}
	return t.Read()
}

// readLossValue copies a one-element loss value to the host and stores it in the step statistics.
func (t *Trainer) readLossValue(l *autograd.Value) error {
	if l.T.Len() != 1 {
		return fmt.Errorf("step %d: the loss value has %d elements, want 1 (or seed the output's gradient)", t.Step+1, l.T.Len())
	}
	h, err := l.T.ToHost()
	if err == nil {
		err = tensor.WriteStatsLoss(t.state.stats, float64(h.Item()))
	}
	if err != nil {
		return fmt.Errorf("step %d: read the loss: %w", t.Step+1, err)
	}
	return nil
}

// lr is the learning rate of the coming step (Options.Warmup and Decay).
func (t *Trainer) lr() float64 {
	return optim.ScheduledLR(t.Opt.LR, t.Step, t.Opt.Warmup, t.Opt.Steps, t.Opt.Decay)
}

// reduce sums a step's gradients and loss over the ranks through host memory:
// gradients and loss down, one all-reduce, back up (on the CPU the gradients are
// reduced in place: Params.GradReduce is their memory). The summed loss goes
// into the step's statistics, so a loss that is not finite on any rank makes
// every rank skip the step (and report it at the next Read). CUDA-aware MPI or
// NCCL would reduce in device memory instead; this build has neither.
func (t *Trainer) reduce() error {
	g := &t.state
	n := t.Params.Len()
	buf := t.Params.GradReduce()
	if err := t.Params.DevGrad.Buffer().Read(buf[:n]); err != nil {
		return fmt.Errorf("step %d: gradients to the host: %w", t.Step+1, err)
	}
	if err := g.stats.Buffer().Read(g.host); err != nil {
		return fmt.Errorf("step %d: read the step's loss: %w", t.Step+1, err)
	}
	loss := tensor.StatsLoss(g.host)
	bad := math.IsNaN(loss) || math.IsInf(loss, 0)
	sum, count, err := t.allreduce(buf, loss, bad)
	if err != nil {
		return err
	}
	if count > 0 {
		sum = math.NaN()
	}
	if err := t.Params.DevGrad.Buffer().Write(buf[:n]); err != nil {
		return fmt.Errorf("step %d: gradients to %s: %w", t.Step+1, g.dev.Name(), err)
	}
	tensor.SetStatsLoss(g.host, sum)
	if err := g.stats.Buffer().Write(g.host); err != nil {
		return fmt.Errorf("step %d: write the step's loss: %w", t.Step+1, err)
	}
	return nil
}

// Read returns the last step's statistics: it waits for the step and copies
// its loss and gradient norm (one device-to-host copy; none on the CPU). If a
// step since the previous Read was not finite (and so skipped) it returns an
// error wrapping ErrNonFinite.
func (t *Trainer) Read() (Stats, error) {
	g := &t.state
	st := g.last
	loss, norm, skipped, err := tensor.ReadStats(g.stats)
	if err != nil {
		return Stats{}, err
	}
	st.Loss, st.GradNorm = loss, norm
	if skipped > 0 {
		if err := tensor.ClearSkipped(g.stats); err != nil {
			return st, err
		}
		return st, fmt.Errorf("by step %d: %d step(s) had a non-finite loss or gradient (last loss %v, gradient norm %v) and were skipped: %w",
			t.Step, skipped, loss, norm, ErrNonFinite)
	}
	return st, nil
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
	if err := t.download(); err != nil {
		return err
	}
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
		if err := checkFinite(f, prefix+s.Name, params.Slice(params.Data, i)); err != nil {
			return err
		}
	}
	if _, err := f.Step(); err != nil && !errors.Is(err, checkpoint.ErrMissing) {
		return err
	}
	return nil
}

// checkFinite names the first tensor of a checkpoint holding NaN or Inf: a
// run that diverged, or a damaged file, must not load as a model.
func checkFinite(f *checkpoint.File, name string, v []float32) error {
	for i, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return fmt.Errorf("checkpoint %s: tensor %q holds %v at element %d (a diverged run or a damaged file)", f.Path, name, x, i)
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
			if err := checkFinite(f, buf.prefix+s.Name, t.Params.Slice(buf.data, i)); err != nil {
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
	if t.Adam.Step < 0 || t.EMA.Updates < 0 {
		return fmt.Errorf("checkpoint %s: negative counters (%s %d, %s %d)", f.Path, keyAdamStep, t.Adam.Step, keyEMASteps, t.EMA.Updates)
	}
	t.Step = int(step)
	return t.upload()
}
