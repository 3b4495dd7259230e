package train

import (
	"errors"
	"fmt"
	"math"

	"holdgo/autograd"
	"holdgo/hold"
	"holdgo/hold/holdops"
	"holdgo/internal/budget"
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

// TimeSampling is how the training loss draws times: Scheme TimesUniform,
// TimesMixed or a σ-matched sampler (TimesSigma, times.go); TimesMixed's log-uniform half starts at LogMin (0: the SDE's
// t_min). A LogMin above t_min spends those samples where the data's
// structure is decided rather than at times so small that the state
// already pins x₀ down (for HOLD-3 the posterior of x₀ given the state has
// a standard deviation of about 1e-5 at t = 0.01; docs/demo.md).
type TimeSampling struct {
	Scheme string
	LogMin float64
}

func (ts TimeSampling) validate(sde *hold.SDE) error {
	if _, err := parseTimes(ts.Scheme); err != nil {
		return err
	}
	if !(ts.LogMin >= 0) || ts.LogMin >= sde.Horizon() {
		return fmt.Errorf("time sampling: log-uniform lower end %g outside [0, T = %g)", ts.LogMin, sde.Horizon())
	}
	return nil
}

// sampleTimes fills dst with the training times of samples first,
// first+1, … of a batch, of the given scheme, from the counter-based stream
// u: U[t_min, T], or for TimesMixed every odd sample log-uniform on
// [max(t_min, LogMin), T].
func sampleTimes(sde *hold.SDE, ts TimeSampling, dst []float64, u rng.Stream, first int) {
	lo, hi := sde.MinTime(), sde.Horizon()
	llo, lhi := math.Log(max(lo, ts.LogMin)), math.Log(hi)
	for j := range dst {
		i := first + j
		v := u.Float64(uint64(i))
		if ts.Scheme == TimesMixed && i%2 == 1 {
			dst[j] = math.Exp(llo + (lhi-llo)*v)
		} else {
			dst[j] = lo + (hi-lo)*v
		}
	}
}

// DataFunc fills dst (batch × d, row-major) with a fresh data batch.
type DataFunc func(r *rng.RNG, dst []float32)

// ScoreLoss is the score-matching loss of an SDE for a score network: per
// batch it draws q0 from data (the trainer's checkpointed host stream), t in
// float64 and ε ~ N(0, I) from the step's counter-based streams, forms x_t and
// the target with the SDE's fused reparameterisation (BCSM or DSM as the SDE's
// objective says) and records ‖E_θ(x_t, t) − target‖², summed over
// dimensions and averaged over the batch. The batch and its times and
// reparameterisation coefficients go to the step's device in one copy (none on
// the CPU, where they are staged in the tensor's own memory; on a GPU from pinned
// memory, without the host waiting: staging), the noise is drawn
// there and the fused ops (tensor.FillNormal, Perturb, ScoreLoss) form x_t, the
// loss and its gradient there; on the CPU these are hold.SDE.Perturb and
// hold.ShardLoss bit for bit. Buffers are reused across steps.
func ScoreLoss(sde *hold.SDE, net layers.ScoreNet, data DataFunc, batch, dim int, times TimeSampling) (LossFunc, error) {
	return ShardScoreLoss(sde, net, data, Shard{Global: batch, Len: batch}, dim, times)
}

// Shard is the part of a global batch that one data-parallel rank computes:
// samples [First, First+Len) of Global (dist.Split).
type Shard struct{ Global, First, Len int }

// shardDropouter is a network whose dropout masks can be those of a shard of a batch
// (layers.NCSNpp.SetDropoutFrom).
type shardDropouter interface {
	SetDropoutFrom(s *rng.Stream, first int)
}

// whole reports whether the shard is the whole batch.
func (s Shard) whole() bool { return s.First == 0 && s.Len == s.Global }

// ShardScoreLoss is ScoreLoss for one rank's shard of a global batch. Every
// draw of a sample depends only on its index in the global batch, never on
// the rank that holds it: the data batch is drawn whole from the
// checkpointed stream (the same on every rank; each keeps its rows), and the
// times and noise are elements First·k … of the step's counter-based
// streams. The loss and its gradient are divided by the global batch, so
// the ranks' losses and gradients sum to the single-process ones. NCSN++
// dropout draws each sample's masks at its place in the whole batch
// (layers.NCSNpp.SetDropoutFrom), on the host and on a device alike
// (tensor.Dropout takes the mask offset).
func ShardScoreLoss(sde *hold.SDE, net layers.ScoreNet, data DataFunc, shard Shard, dim int, times TimeSampling) (LossFunc, error) {
	if shard.Global < 1 || shard.Len < 1 || shard.First < 0 || shard.First+shard.Len > shard.Global {
		return nil, fmt.Errorf("shard of samples [%d, %d) of a batch of %d", shard.First, shard.First+shard.Len, shard.Global)
	}
	dropout, _ := net.(layers.Dropouter)
	shardDrop, _ := net.(shardDropouter)
	if dropout != nil && shardDrop == nil && !shard.whole() {
		return nil, fmt.Errorf("the network's dropout cannot draw the masks of a shard of the batch: train on one rank")
	}
	batch := shard.Len
	drawTimes, err := newTimeSampler(sde, times)
	if err != nil {
		return nil, err
	}
	n := sde.Blocks()
	if state, out := net.Widths(); state != n*dim || out != dim {
		return nil, fmt.Errorf("score network maps a state of %d values to %d, but a %d-block SDE on %d-dimensional data needs %d → %d",
			state, out, n, dim, n*dim, dim)
	}
	dsm := sde.Config().Objective == hold.ObjectiveDSM && n > 1
	ts := make([]float64, batch)
	var whole []float32 // the whole batch's data where the shard is a part of it
	if !shard.whole() {
		whole = make([]float32, shard.Global*dim)
	}
	var l *deviceLoss
	return func(c *StepContext) (*autograd.Value, error) {
		if l == nil || l.dev != c.Device {
			var err error
			if l, err = newDeviceLoss(c.Device, shard, n, dim, dsm); err != nil {
				return nil, err
			}
		}
		q0, err := l.staged.hostData()
		if err != nil {
			return nil, err
		}
		if shard.whole() {
			data(c.RNG, q0)
		} else {
			data(c.RNG, whole)
			copy(q0, whole[shard.First*dim:])
		}
		drawTimes.fill(ts, c.Stream(rng.StreamTimes), shard.First)
		defer shardDropout(c, dropout, shardDrop, shard)()
		return l.record(c, sde, net, ts)
	}, nil
}

// shardDropout turns the network's dropout on with the masks of the step's streams at the shard's
// place in the whole batch (resumes stay bit-exact, ranks draw what one process draws) and returns
// what turns it off again (nothing to do for a network without dropout).
func shardDropout(c *StepContext, dropout layers.Dropouter, shardDrop shardDropouter, shard Shard) func() {
	if dropout == nil {
		return func() {}
	}
	s := c.Stream(0)
	if shard.whole() {
		dropout.SetDropout(&s)
	} else {
		shardDrop.SetDropoutFrom(&s, shard.First)
	}
	return func() { dropout.SetDropout(nil) }
}

// deviceLoss is ScoreLoss's device memory, the shard's rows only: its noise is the draws of its
// place in the whole batch (tensor.FillNormalFrom), so a rank draws no other rank's noise.
type deviceLoss struct {
	dev                       tensor.Device
	staged                    *stagedBatch
	global                    int
	first                     uint64 // the shard's first sample
	eps, aux, x, target, grad *tensor.Tensor
}

func newDeviceLoss(dev tensor.Device, shard Shard, n, dim int, dsm bool) (*deviceLoss, error) {
	batch := shard.Len
	sb, err := newStagedBatch(dev, batch, dim)
	if err != nil {
		return nil, err
	}
	l := &deviceLoss{dev: dev, staged: sb, global: shard.Global, first: uint64(shard.First), x: tensor.New(dev, batch, n*dim),
		target: tensor.New(dev, batch, dim), grad: tensor.New(dev, batch, dim), eps: tensor.New(dev, batch, n*dim)}
	if dsm {
		l.aux = tensor.New(dev, batch, (n-1)*dim)
	}
	return l, tensor.Err(l.x, l.target, l.grad, l.eps, l.aux)
}

// record runs the step's reparameterisation, forward pass and loss on the device, the data batch
// staged in l.staged.hostData().
func (l *deviceLoss) record(c *StepContext, sde *hold.SDE, net layers.ScoreNet, times []float64) (*autograd.Value, error) {
	if err := l.staged.upload(sde, times); err != nil {
		return nil, err
	}
	tensor.FillNormalFrom(l.eps, c.Stream(rng.StreamNoise), l.first*uint64(l.eps.Dim(1)))
	if l.aux != nil {
		tensor.FillNormalFrom(l.aux, c.Stream(rng.StreamAux), l.first*uint64(l.aux.Dim(1)))
	}
	tensor.Perturb(l.x, l.target, l.staged.coef, l.staged.data, l.eps, l.aux, sde.Blocks())
	g := c.Tape
	out := net.ScoreForward(g, g.Const(l.x), g.Const(l.staged.times))
	tensor.ScoreLoss(l.grad, out.T, l.target, c.Stats, l.global)
	out.Grad = l.grad
	return out, nil
}

// staging is a device tensor and the host memory its inputs are written to before one upload. On
// the CPU that is the tensor's own memory (tensor.HostMemory), so that the upload copies nothing; on
// a device with a stager (a GPU: cuda.Device.NewStager) it is one of two pinned buffers taken in
// turn, whose copy the host does not wait for; elsewhere it is Go memory, copied by Write (which
// waits for the device). Each step calls begin, writes host, then calls upload.
type staging struct {
	dev    *tensor.Tensor
	host   []float32  // this step's inputs: valid from begin to upload
	stager hostStager // nil: upload writes host to dev
}

// hostStager is cuda.Stager (an alias of this same unnamed interface type: train does not import
// cuda). Host returns the pinned buffer for the next upload once the copy that last read it has
// finished; Upload enqueues its copy to the tensor.
type hostStager = interface {
	Host() ([]float32, error)
	Upload() error
}

// stagerDevice is a device that makes stagers (cuda.Device; the error wraps tensor.ErrUnsupported
// on a backend without pinned memory).
type stagerDevice interface {
	NewStager(dst *tensor.Tensor) (hostStager, error)
}

func newStaging(dev tensor.Device, shape ...int) (*staging, error) {
	t := tensor.New(dev, shape...)
	if err := t.Err(); err != nil {
		return nil, err
	}
	if host := tensor.HostMemory(t); host != nil {
		return &staging{dev: t, host: host}, nil
	}
	if sd, ok := dev.(stagerDevice); ok {
		st, err := sd.NewStager(t)
		if err == nil {
			return &staging{dev: t, stager: st}, nil
		}
		if !errors.Is(err, tensor.ErrUnsupported) {
			return nil, fmt.Errorf("staging on %s: %w", dev.Name(), err)
		}
	}
	return &staging{dev: t, host: make([]float32, t.Len())}, nil
}

// begin makes host the memory for this step's inputs.
func (s *staging) begin() error {
	if s.stager == nil {
		return nil
	}
	host, err := s.stager.Host()
	if err != nil {
		return fmt.Errorf("staging on %s: %w", s.dev.Device().Name(), err)
	}
	s.host = host
	return nil
}

// upload copies host to the device tensor (with a stager: enqueues the copy, and host is not this
// staging's to write until the next begin).
func (s *staging) upload() error {
	var err error
	if s.stager != nil {
		err = s.stager.Upload()
		s.host = nil
	} else {
		err = s.dev.Buffer().Write(s.host)
	}
	if err != nil {
		return fmt.Errorf("upload to %s: %w", s.dev.Device().Name(), err)
	}
	return nil
}

// stagedBatch is a training step's host inputs in one device buffer, uploaded by one copy: the
// float64 coefficients of the fused reparameterisation (holdops.PutPerturbCoefficients,
// tensor.PerturbCoefLen slots per sample; first, so that they are 8-byte aligned), the data
// batch q0 (B×d) and the times (B, float32 for the network).
type stagedBatch struct {
	*staging
	coef, data, times *tensor.Tensor // views into dev
	batch, dim        int
}

func newStagedBatch(dev tensor.Device, batch, dim int) (*stagedBatch, error) {
	nc := tensor.PerturbCoefLen * batch
	st, err := newStaging(dev, nc+batch*dim+batch)
	if err != nil {
		return nil, err
	}
	sb := &stagedBatch{staging: st, batch: batch, dim: dim}
	if sb.coef, err = tensor.View(sb.dev, 0, nc); err != nil {
		return nil, err
	}
	if sb.data, err = tensor.View(sb.dev, nc, batch, dim); err != nil {
		return nil, err
	}
	sb.times, err = tensor.View(sb.dev, nc+batch*dim, batch)
	return sb, err
}

// hostData begins the step's staging and returns the host side of data, to be filled before upload.
func (sb *stagedBatch) hostData() ([]float32, error) {
	if err := sb.begin(); err != nil {
		return nil, err
	}
	nc := tensor.PerturbCoefLen * sb.batch
	return sb.host[nc : nc+sb.batch*sb.dim], nil
}

// upload stores the reparameterisation coefficients of the times and the times next to the data
// and copies the whole batch to the device.
func (sb *stagedBatch) upload(sde *hold.SDE, times []float64) error {
	if len(times) != sb.batch {
		return fmt.Errorf("staged batch of %d samples given %d times", sb.batch, len(times))
	}
	if sb.host == nil {
		return errors.New("staged batch uploaded without hostData")
	}
	for b, t := range times {
		holdops.PutPerturbCoefficients(sb.host[b*tensor.PerturbCoefLen:], sde, t)
		sb.host[tensor.PerturbCoefLen*sb.batch+sb.batch*sb.dim+b] = float32(t)
	}
	return sb.staging.upload()
}

// NetworkScorer turns a trained score network into a hold.Scorer: the last
// block's score ℓ_t·E_θ(x, t), evaluated without recording gradients.
type NetworkScorer struct {
	SDE *hold.SDE
	Net layers.ScoreNet
	// ForwardBatch caps the samples of one forward pass (0: DefaultForwardBatch): Score splits a larger
	// batch, so that sampling 1,000 images holds the activations of 64, not of 1,000 (measured: 10–15
	// GB for ncsnpp-small, which ended in the out-of-memory killer on a 23 GB machine). Each sample's
	// score is computed by the same operations whatever the split.
	ForwardBatch int
	// MemoryBudget, where ForwardBatch is 0 and MemoryBudget > 0, chooses the forward batch from the
	// memory a forward pass holds: the first call runs one pass of at most ProbeBatch samples, reads
	// the tape's tensor memory (activations, weights excluded) per sample, and from then on passes
	// MemoryBudget / that many samples (at least 1, at most MaxForwardBatch). Per scorer: each worker's
	// fork holds its own. Every sample's score is the same up to float32 rounding whatever the split.
	MemoryBudget int64

	// EDM marks a network trained with EDM's preconditioning (PrecondEDM): its input is (c_in·c, w)
	// of the state and its output F gives x̂₀ = c_skip·c + c_out·F; the scorer forms both in float64
	// (hold.Precond). Such a network samples with the state on the host (DeviceResident).
	EDM bool

	// PadBatch makes every pass hold exactly the forward batch: a shorter one is padded with copies of
	// its last sample (its results dropped), and ScoreVJP splits into such passes too. The kernels
	// choose their algorithms from the batch size (Winograd or im2col, GEMM blocking), but at one batch
	// size a sample's result depends neither on its position nor on the other samples, so with
	// PadBatch every sample's score and VJP are bit-identical whatever the number of samples in a call
	// (holdctl restore: the same image restores to the same bits in any --n, --first or --samples-per-
	// image; TestPadBatchBitIdentical). The memory probe's pass is then only measured, not kept.
	PadBatch bool

	tape  *autograd.Tape
	chunk int // the forward batch MemoryBudget chose (0 until the first call measured it)
	x, t  *tensor.Tensor
	out   []float32
	pc    precondCache
}

// DeviceResident reports whether a sampler may keep the state on the network's device and turn the
// output into a score there (sample.Sampler.DeviceFor): not for an EDM-preconditioned network.
func (s *NetworkScorer) DeviceResident() bool { return !s.EDM }

// Network is the score network (sample.Networked).
func (s *NetworkScorer) Network() layers.ScoreNet { return s.Net }

// Fork implements sample.Forker: a scorer with the same network and SDE
// and its own tape and buffers, for another goroutine (the network's
// forward pass only reads the parameters).
func (s *NetworkScorer) Fork() hold.Scorer {
	return &NetworkScorer{SDE: s.SDE, Net: s.Net, ForwardBatch: s.ForwardBatch, MemoryBudget: s.MemoryBudget, EDM: s.EDM, PadBatch: s.PadBatch, chunk: s.chunk}
}

// Score implements hold.Scorer for x (B × n·d) at per-sample times t. The
// network runs where its parameters live (layers.Params.ToDevice): on a device
// the states and times go up and the outputs come back per call.
func (s *NetworkScorer) Score(dst, x, t []float64) error {
	batch := len(t)
	if batch == 0 {
		return nil
	}
	width := len(x) / batch
	state, d := s.Net.Widths()
	if width*batch != len(x) || width != state || len(dst) != batch*d {
		return fmt.Errorf("network scorer: state %d, times %d, scores %d do not fit a network from %d to %d values",
			len(x), batch, len(dst), state, d)
	}
	chunk, lo, err := s.forwardBatch(dst, x, t)
	if err != nil {
		return err
	}
	for ; lo < batch; lo += chunk {
		hi := min(batch, lo+chunk)
		if s.PadBatch && hi-lo < chunk {
			if err := s.paddedChunk(dst[lo*d:hi*d], x[lo*width:hi*width], t[lo:hi], chunk); err != nil {
				return err
			}
			continue
		}
		if err := s.scoreChunk(dst[lo*d:hi*d], x[lo*width:hi*width], t[lo:hi]); err != nil {
			return err
		}
	}
	return nil
}

// forwardBatch returns the samples of one pass and how many leading samples of the call the memory
// probe (MemoryBudget's first pass) already scored into dst.
func (s *NetworkScorer) forwardBatch(dst, x, t []float64) (chunk, done int, err error) {
	switch {
	case s.ForwardBatch > 0:
		chunk = s.ForwardBatch
	case s.MemoryBudget <= 0:
		chunk = DefaultForwardBatch
	case s.chunk > 0:
		chunk = s.chunk
	default: // measure a pass of at most ProbeBatch samples, then size the others from it
		batch := len(t)
		width, d := len(x)/batch, len(dst)/batch
		done = s.fitBudget(min(batch, ProbeBatch))
		probe := dst[:done*d]
		if s.PadBatch { // measured only: its samples are scored again in passes of the chosen size
			probe, done = make([]float64, done*d), 0
		}
		if err := s.scoreChunk(probe, x[:len(probe)/d*width], t[:len(probe)/d]); err != nil {
			return 0, 0, err
		}
		perSample := max(1, s.tape.MemBytes()/int64(len(probe)/d))
		s.chunk = int(min(max(1, s.MemoryBudget/perSample), MaxForwardBatch))
		chunk = s.chunk
	}
	return s.fitBudget(chunk), done, nil
}

// paddedChunk scores the samples of x in one pass of exactly size samples, the last one repeated.
func (s *NetworkScorer) paddedChunk(dst, x, t []float64, size int) error {
	n := len(t)
	width, d := len(x)/n, len(dst)/n
	xp, tp := padRows(x, width, size), padRows(t, 1, size)
	out := make([]float64, size*d)
	if err := s.scoreChunk(out, xp, tp); err != nil {
		return err
	}
	copy(dst, out[:n*d])
	return nil
}

// padRows returns v (rows of width values) extended to size rows by copies of its last row.
func padRows(v []float64, width, size int) []float64 {
	out := make([]float64, size*width)
	n := copy(out, v)
	last := v[len(v)-width:]
	for ; n < len(out); n += width {
		copy(out[n:], last)
	}
	return out
}

// fitBudget caps a forward batch so that its estimated activations (a network's
// ForwardBytesPerSample, such as NCSN++'s) fit the process's memory budget: at least 1.
func (s *NetworkScorer) fitBudget(chunk int) int {
	if f, ok := s.Net.(interface{ ForwardBytesPerSample() int64 }); ok {
		if per := f.ForwardBytesPerSample(); per > 0 {
			chunk = int(min(int64(chunk), max(1, budget.Limit()/per)))
		}
	}
	return chunk
}

// NetworkScorer's forward batches: DefaultForwardBatch where neither ForwardBatch nor MemoryBudget is
// set; ProbeBatch samples in the pass that measures the memory per sample for MemoryBudget, and at
// most MaxForwardBatch in a pass it sizes.
const (
	DefaultForwardBatch = 64
	ProbeBatch          = 8
	MaxForwardBatch     = 4096
)

// ForwardBatchChosen is the forward batch MemoryBudget chose (0 before the first Score call or
// where ForwardBatch or no budget decides).
func (s *NetworkScorer) ForwardBatchChosen() int { return s.chunk }

// scoreChunk is Score for one forward pass.
func (s *NetworkScorer) scoreChunk(dst, x, t []float64) error {
	batch := len(t)
	width := len(x) / batch
	dev := s.Net.Parameters().Device()
	if s.tape == nil || s.tape.Device() != dev {
		s.tape = autograd.NewTape(dev)
		s.tape.SetNoGrad(true)
	}
	if s.x == nil || s.x.Len() != len(x) {
		s.x, s.t = tensor.Zeros(batch, width), tensor.Zeros(batch)
		s.out = make([]float32, len(dst))
	}
	if s.EDM {
		if err := precondInput(s.x.Data(), x, t, s.SDE, &s.pc); err != nil {
			return err
		}
	} else {
		for i, v := range x {
			s.x.Data()[i] = float32(v)
		}
	}
	for i, v := range t {
		s.t.Data()[i] = float32(v)
	}
	s.tape.Reset()
	xd, td, err := toDevice(dev, s.x, s.t)
	if err != nil {
		return err
	}
	out := s.Net.ScoreForward(s.tape, s.tape.Const(xd), s.tape.Const(td))
	h, err := out.T.ToHost()
	if err != nil {
		return fmt.Errorf("network scorer: %w", err)
	}
	copy(s.out, h.Data())
	if s.EDM {
		return precondScore(dst, s.out, x, t, s.SDE, &s.pc)
	}
	return s.SDE.ScoreFromOutput(dst, s.out, t)
}

// toDevice copies host tensors to dev (returning them as they are for the CPU).
func toDevice(dev tensor.Device, ts ...*tensor.Tensor) (*tensor.Tensor, *tensor.Tensor, error) {
	out := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		var err error
		if out[i], err = t.ToDevice(dev); err != nil {
			return nil, nil, fmt.Errorf("network scorer: %w", err)
		}
	}
	return out[0], out[1], nil
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
	if !s.PadBatch {
		return s.scoreVJPPass(score, vjp, x, u, t)
	}
	chunk := DefaultForwardBatch
	switch {
	case s.ForwardBatch > 0:
		chunk = s.ForwardBatch
	case s.chunk > 0:
		chunk = s.chunk
	}
	chunk = s.fitBudget(chunk)
	for lo := 0; lo < batch; lo += chunk {
		hi := min(batch, lo+chunk)
		// The padded samples' cotangents are zero (their results are dropped either way).
		xp, tp := padRows(x[lo*width:hi*width], width, chunk), padRows(t[lo:hi], 1, chunk)
		up := make([]float64, chunk*d)
		copy(up, u[lo*d:hi*d])
		vp := make([]float64, chunk*width)
		var sp []float64
		if score != nil {
			sp = make([]float64, chunk*d)
		}
		if err := s.scoreVJPPass(sp, vp, xp, up, tp); err != nil {
			return err
		}
		copy(vjp[lo*width:hi*width], vp)
		if score != nil {
			copy(score[lo*d:hi*d], sp)
		}
	}
	return nil
}

// scoreVJPPass is ScoreVJP in one pass of the network.
func (s *NetworkScorer) scoreVJPPass(score, vjp, x, u, t []float64) error {
	batch := len(t)
	width, d := s.Net.Widths()
	dev := s.Net.Parameters().Device()
	g := autograd.NewTape(dev)
	xt, tt := tensor.Zeros(batch, width), tensor.Zeros(batch)
	if s.EDM {
		if err := precondInput(xt.Data(), x, t, s.SDE, &s.pc); err != nil {
			return err
		}
	} else {
		for i, v := range x {
			xt.Data()[i] = float32(v)
		}
	}
	for i, v := range t {
		tt.Data()[i] = float32(v)
	}
	xd, td, err := toDevice(dev, xt, tt)
	if err != nil {
		return err
	}
	xv := g.Var(xd)
	out := s.Net.ScoreForward(g, xv, g.Const(td))
	// Seed with ℓ_t·u so that the pull-back is uᵀ∂(ℓ_t E)/∂x. The
	// parameters' gradients are not wanted: they are restored afterwards.
	p := s.Net.Parameters()
	saved := p.DevGrad.Clone()
	defer tensor.Copy(p.DevGrad, saved)
	// With EDM's preconditioning S = rᵀm·(c_skip·c + c_out·F(In·x)) − rᵀx: the network's part is seeded
	// with rᵀm·c_out·u and pulled back through the input map below.
	seed := tensor.Zeros(batch, d)
	for b, tb := range t {
		ell := s.SDE.Ell(tb)
		if s.EDM {
			pre, err := s.pc.at(s.SDE, tb)
			if err != nil {
				return err
			}
			ell = pre.ScoreX0 * pre.COut
		}
		for i := range d {
			seed.Data()[b*d+i] = float32(ell * u[b*d+i])
		}
	}
	if out.Grad, err = seed.ToDevice(dev); err != nil {
		return fmt.Errorf("network scorer: %w", err)
	}
	g.BackwardFrom(out)
	gx, err := xv.Grad.ToHost()
	if err != nil {
		return fmt.Errorf("network scorer: %w", err)
	}
	if s.EDM {
		if err := s.precondPullBack(vjp, gx.Data(), u, t); err != nil {
			return err
		}
	} else {
		for i, v := range gx.Data() {
			vjp[i] = float64(v)
		}
	}
	if score != nil {
		h, err := out.T.ToHost()
		if err != nil {
			return fmt.Errorf("network scorer: %w", err)
		}
		o := make([]float32, batch*d)
		copy(o, h.Data())
		if s.EDM {
			return precondScore(score, o, x, t, s.SDE, &s.pc)
		}
		return s.SDE.ScoreFromOutput(score, o, t)
	}
	return nil
}

// precondPullBack writes the VJP uᵀ∂S/∂x of an EDM-preconditioned score from the network's input
// gradient gv (B × n·d): vjp[j] = u·(rᵀm·c_skip·toC_j − r_j) + Σ_k In[k][j]·gv[k], per data dimension.
func (s *NetworkScorer) precondPullBack(vjp []float64, gv []float32, u, t []float64) error {
	n := s.SDE.Blocks()
	d := len(u) / len(t)
	for b, tb := range t {
		p, err := s.pc.at(s.SDE, tb)
		if err != nil {
			return err
		}
		base := b * n * d
		for j := range n {
			direct := p.ScoreX0*p.CSkip*p.ToC[j] - p.ScoreU[j]
			for i := range d {
				v := u[b*d+i] * direct
				for k := range n {
					v += p.In[k][j] * float64(gv[base+k*d+i])
				}
				vjp[base+j*d+i] = v
			}
		}
	}
	return nil
}
