package sample

import (
	"errors"
	"fmt"
	"strings"

	"holdgo/autograd"
	"holdgo/hold"
	"holdgo/hold/holdops"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// OnDevice reports whether the sampler keeps its whole state on a device (SampleOn, EachOn), or
// why not: the one place that says which samplers run where. "lt" (LieTrotter with the Euler
// B-step and the score at the step's start) and "em" (EulerMaruyama) run as tensor.BlockStep ops
// on the device; every other method (lt-mid, the exponential B-steps, ode's adaptive step
// control, heun, rk4, pc, the x̂₀ samplers), the denoising step and recorded trajectories
// integrate their float64 state on the host, with the network evaluated wherever its parameters
// are (train.NetworkScorer).
func (s *Sampler) OnDevice() error {
	switch m := s.Method.(type) {
	case LieTrotter:
		if (m.BStep != "" && m.BStep != BEuler) || m.ScoreAt != ScoreStart {
			return fmt.Errorf("sample: %s has no device implementation (on a device: lt, em)", m.Name())
		}
	case EulerMaruyama:
	default:
		return fmt.Errorf("sample: %s has no device implementation (on a device: lt, em)", s.Method.Name())
	}
	if s.Denoise || len(s.Record) > 0 {
		return errors.New("sample: the device sampler does not denoise or record trajectories")
	}
	return nil
}

// SampleOn draws n samples like Sample, with the score network net (its parameters already on
// dev) evaluated on dev and the whole state kept there until the end: per chunk, the prior, the
// network, the noise (the same Philox streams as Sample) and the updates all run on the device,
// and the samples are copied back once. Methods: those of OnDevice — LieTrotter ("lt": the
// opening A-half, then per score evaluation one fused block-affine op doing B, the closing A-half
// and the next step's opening A-half) and EulerMaruyama ("em": hold.SDE.EMStep as an A-step and a
// B-update). The state is float32 on the device where Sample keeps float64, which bounds the
// agreement (see docs/gpu.md).
func (s *Sampler) SampleOn(dev tensor.Device, net layers.ScoreNet, n int, seed uint64) (*Result, error) {
	if n < 1 {
		return nil, fmt.Errorf("sample: want at least one sample, got %d", n)
	}
	row := s.SDE.Blocks() * s.Dim
	res := &Result{X: make([]float64, n*row)}
	st, err := s.EachOn(dev, net, n, seed, func(first int, x []float64) error {
		copy(res.X[first*row:], x)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.NFE, res.Diverged = st.NFE, st.Diverged
	return res, nil
}

// EachOn is SampleOn chunk by chunk, as Each: each chunk's samples are copied back and handed to
// emit in order (first is the index of the chunk's first sample). On a device whose memory is the
// host's (tensor.HostResident: the CPU, the Reference) Workers chunks run at a time, as in Sample,
// each with its own tape and state (the network's forward pass only reads the parameters); elsewhere
// one after another.
func (s *Sampler) EachOn(dev tensor.Device, net layers.ScoreNet, n int, seed uint64, emit func(first int, x []float64) error) (StreamResult, error) {
	if err := s.validate(); err != nil {
		return StreamResult{}, err
	}
	if err := s.OnDevice(); err != nil {
		return StreamResult{}, err
	}
	if net.Parameters().Device() != dev {
		return StreamResult{}, fmt.Errorf("sample: the network's parameters are on %s, not on %s", net.Parameters().Device().Name(), dev.Name())
	}
	workers := 1
	if tensor.HostResident(dev) { // the CPU's and the Reference's kernels run concurrently on distinct tensors
		workers = s.Workers
	}
	return s.chunks(n, seed, workers, emit, func(x []float64, batch int, key uint64) (int, error) {
		nfe, err := s.chunkOn(dev, net, x, batch, key)
		if err != nil {
			return nfe, fmt.Errorf("sample: %s on %s: %w", s.Method.Name(), dev.Name(), err)
		}
		return nfe, nil
	})
}

// deviceRun is one chunk's device state.
type deviceRun struct {
	dev        tensor.Device
	sde        *hold.SDE
	net        layers.ScoreNet
	key        uint64
	next       uint32 // the next noise draw (philoxNoise's counter)
	batch, dim int
	x, z, tt   *tensor.Tensor
	tape       *autograd.Tape
}

// noise fills z with the next draw of the chunk's sampler stream.
func (r *deviceRun) noise(z *tensor.Tensor) *tensor.Tensor {
	tensor.FillNormal(z, rng.Stream{Key: r.key, Step: r.next, ID: rng.StreamSampler})
	r.next++
	return z
}

// output evaluates the network at time t on the state: E_θ(x, t), (B, d).
func (r *deviceRun) output(t float64) *tensor.Tensor {
	r.tape.Reset()
	tensor.Fill(r.tt, float32(t))
	return r.net.ScoreForward(r.tape, r.tape.Const(r.x), r.tape.Const(r.tt)).T
}

func (s *Sampler) chunkOn(dev tensor.Device, net layers.ScoreNet, dst []float64, batch int, key uint64) (int, error) {
	n := s.SDE.Blocks()
	r := &deviceRun{dev: dev, sde: s.SDE, net: net, key: key, batch: batch, dim: s.Dim,
		x: tensor.New(dev, batch, n*s.Dim), z: tensor.New(dev, batch, n*s.Dim), tt: tensor.New(dev, batch), tape: autograd.NewTape(dev)}
	r.tape.SetNoGrad(true)
	// Prior: x = diag(PriorStd)·z with z the prior stream (philoxPrior).
	tensor.FillNormal(r.z, rng.Stream{Key: key, ID: rng.StreamPrior})
	tensor.BlockStep(r.x, nil, []*tensor.Tensor{r.z}, holdops.Prior(s.SDE))
	var nfe int
	var err error
	if _, ok := s.Method.(EulerMaruyama); ok {
		nfe, err = s.emOn(r)
	} else {
		nfe, err = s.ltOn(r)
	}
	if err != nil {
		return nfe, err
	}
	h, err := r.x.ToHost()
	if err != nil {
		return nfe, err
	}
	for i, v := range h.Data() {
		dst[i] = float64(v)
	}
	return nfe, nil
}

// ltOn is LieTrotter.step on the device with the score at the step's start: A(t, h/2), score at
// t, B, A(t − h/2, h/2), with the closing half of a step and the opening half of the next fused
// into one op (holdops.LieTrotter).
func (s *Sampler) ltOn(r *deviceRun) (int, error) {
	g := s.Grid
	if len(g) < 2 {
		return 0, nil
	}
	z2 := tensor.New(r.dev, r.batch, s.SDE.Blocks()*s.Dim)
	tensor.BlockStep(r.x, nil, []*tensor.Tensor{r.noise(r.z)}, holdops.AStep(s.SDE.AStep(g[0], (g[0]-g[1])/2)))
	nfe := 0
	for i := 0; i+1 < len(g); i++ {
		t, h := g[i], g[i]-g[i+1]
		out := r.output(t)
		nfe++
		hNext := 0.0
		if i+2 < len(g) {
			hNext = g[i+1] - g[i+2]
		}
		st := holdops.LieTrotter(s.SDE, t, h, hNext, s.SDE.Ell(t), false)
		z := []*tensor.Tensor{r.noise(r.z)}
		if st.Halves == 2 {
			z = append(z, r.noise(z2))
		}
		if err := tensor.Err(tensor.BlockStep(r.x, out, z, st)); err != nil {
			return nfe, fmt.Errorf("step %d (t = %g): %w", i, t, err)
		}
	}
	return nfe, nil
}

// emOn is EulerMaruyama.step on the device: the score at t, then x ← ExpA·x + CholA·z and
// x_n ← x_n + c·ℓ_t·E_θ (holdops.EulerMaruyama); the noise is the last block's (B, d) draw, placed
// into the last block of a (B, n·d) tensor.
func (s *Sampler) emOn(r *deviceRun) (int, error) {
	n, d := s.SDE.Blocks(), s.Dim
	last := tensor.New(r.dev, r.batch, d)
	var zeros *tensor.Tensor
	if n > 1 {
		zeros = tensor.New(r.dev, r.batch, (n-1)*d)
	}
	nfe := 0
	for i := 0; i+1 < len(s.Grid); i++ {
		t, h := s.Grid[i], s.Grid[i]-s.Grid[i+1]
		out := r.output(t)
		nfe++
		z := r.noise(last)
		if zeros != nil {
			z = tensor.Concat(r.z, 1, zeros, last)
		}
		a, b := holdops.EulerMaruyama(s.SDE, t, h, s.SDE.Ell(t))
		tensor.BlockStep(r.x, nil, []*tensor.Tensor{z}, a)
		if err := tensor.Err(tensor.BlockStep(r.x, out, nil, b)); err != nil {
			return nfe, fmt.Errorf("step %d (t = %g): %w", i, t, err)
		}
	}
	return nfe, nil
}

// Networked is a score computed by a network (train.NetworkScorer): DeviceFor moves its parameters to
// the device.
type Networked interface {
	hold.Scorer
	Network() layers.ScoreNet
}

// DeviceFor prepares s to sample on dev (named name in errors) with the model's score (before any
// clipping), the CPU like any other device: the network of score (a Networked) moves to dev; if the
// sampler runs there (OnDevice, and the score is the model's own, not a clipped one that wraps it) it
// returns the device and the network, for SampleOn and EachOn to keep the whole state on the device
// (on the CPU too: "lt" and "em" there are ltOn and emOn on tensor.CPU, a float32 state). Otherwise
// the sampler integrates its float64 state on the host and evaluates the network on the device (one
// state upload and one score download per evaluation where the device's memory is not the host's):
// nil. A score that is no network (the --oracle score) is a host function: nil on a device whose
// memory is the host's (tensor.HostResident), an error elsewhere.
func (s *Sampler) DeviceFor(dev tensor.Device, score hold.Scorer, name string) (tensor.Device, layers.ScoreNet, error) {
	ns, ok := score.(Networked)
	if !ok {
		if tensor.HostResident(dev) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("--device %s samples a trained network (--ckpt); the --oracle score runs on the CPU", name)
	}
	net := ns.Network()
	if err := net.Parameters().ToDevice(dev); err != nil {
		return nil, nil, fmt.Errorf("--device %s: %v", name, err)
	}
	if s.HostReason(score) != "" {
		return nil, nil, nil
	}
	return dev, net, nil
}

// HostReason says why sampling with the model's score (before any clipping) on a device keeps the
// state on the host, the network still evaluated on the device; "" when the whole state stays on the
// device (SampleOn). It is the one place DeviceFor decides, so a command can say it rather than fall
// back silently.
func (s *Sampler) HostReason(score hold.Scorer) string {
	if r, ok := score.(interface{ DeviceResident() bool }); ok && !r.DeviceResident() {
		return "the network was trained with EDM's preconditioning (--precond edm): its score is formed from the state on the host"
	}
	if err := s.OnDevice(); err != nil {
		return strings.TrimPrefix(err.Error(), "sample: ")
	}
	if s.Score != score {
		if _, ok := s.Score.(*ClippedScorer); ok {
			return "--clip thresholds x̂₀ inside the score of " + s.Method.Name() + " on the host (--clip 0 keeps the whole state on the device)"
		}
		return "the score is wrapped on the host"
	}
	return ""
}
