package sample

import (
	"errors"
	"fmt"
	"strings"

	"holdgo/autograd"
	"holdgo/cuda"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// SampleOn draws n samples like Sample, with the score network net (its parameters already on
// dev) evaluated on the CUDA device dev and the whole state kept there until the end: per chunk,
// the prior, the network, the noise (the same Philox streams as Sample) and the updates all run
// on the device, and the samples are copied back once. Methods: LieTrotter with the Euler B-step
// and the score at the midpoint or the start ("lt": the opening A-half, then per score evaluation one fused Lie–Trotter
// kernel doing B, the closing A-half and the next step's opening A-half) and EulerMaruyama ("em":
// hold.SDE.EMStep as an A-step and a B-update). The state is float32 on the device where Sample
// keeps float64, which bounds the agreement (see docs/gpu.md).
func (s *Sampler) SampleOn(dev *cuda.Device, net layers.ScoreNet, n int, seed uint64) (*Result, error) {
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
// emit in order (first is the index of the chunk's first sample).
func (s *Sampler) EachOn(dev *cuda.Device, net layers.ScoreNet, n int, seed uint64, emit func(first int, x []float64) error) (StreamResult, error) {
	var res StreamResult
	if err := s.validate(); err != nil {
		return res, err
	}
	if n < 1 {
		return res, fmt.Errorf("sample: want at least one sample, got %d", n)
	}
	switch m := s.Method.(type) {
	case LieTrotter:
		if m.BStep != "" && m.BStep != BEuler {
			return res, fmt.Errorf("sample: %s has no CUDA implementation (on cuda: lt, em)", m.Name())
		}
	case EulerMaruyama:
	default:
		return res, fmt.Errorf("sample: %s has no CUDA implementation (on cuda: lt, em)", s.Method.Name())
	}
	if s.Denoise || len(s.Record) > 0 {
		return res, errors.New("sample: the CUDA sampler does not denoise or record trajectories")
	}
	if net.Parameters().Device() != tensor.Device(dev) {
		return res, fmt.Errorf("sample: the network's parameters are on %s, not on %s", net.Parameters().Device().Name(), dev.Name())
	}
	maxBatch := s.MaxBatch
	if maxBatch == 0 {
		maxBatch = DefaultMaxBatch
	}
	row := s.SDE.Blocks() * s.Dim
	x := make([]float64, min(n, maxBatch)*row)
	for c := 0; c*maxBatch < n; c++ {
		lo := c * maxBatch
		batch := min(n-lo, maxBatch)
		xs := x[:batch*row]
		nfe, err := s.chunkOn(dev, net, xs, batch, ChunkSeed(seed, c))
		if err != nil {
			return res, fmt.Errorf("sample: %s on %s: %w", s.Method.Name(), dev.Name(), err)
		}
		res.NFE = max(res.NFE, nfe)
		for i := range batch {
			if Diverged(xs[i*row : (i+1)*row]) {
				res.Diverged++
			}
		}
		if err := emit(lo, xs); err != nil {
			return res, err
		}
	}
	return res, nil
}

// deviceRun is one chunk's device state.
type deviceRun struct {
	dev        *cuda.Device
	sde        *hold.SDE
	net        layers.ScoreNet
	key        uint64
	next       uint32 // the next noise draw (philoxNoise's counter)
	batch, dim int
	x, z, tt   *tensor.Tensor
	tape       *autograd.Tape
}

// noise fills z with the next draw of the chunk's sampler stream.
func (r *deviceRun) noise(z *tensor.Tensor) error {
	err := r.dev.FillNormal(z, rng.Stream{Key: r.key, Step: r.next, ID: rng.StreamSampler})
	r.next++
	return err
}

// output evaluates the network at time t on the state: E_θ(x, t), (B, d).
func (r *deviceRun) output(t float64) (*tensor.Tensor, error) {
	r.tape.Reset()
	tensor.Fill(r.tt, float32(t))
	out := r.net.ScoreForward(r.tape, r.tape.Const(r.x), r.tape.Const(r.tt))
	if err := tensor.Err(out.T); err != nil {
		return nil, err
	}
	return out.T, nil
}

func (s *Sampler) chunkOn(dev *cuda.Device, net layers.ScoreNet, dst []float64, batch int, key uint64) (int, error) {
	n := s.SDE.Blocks()
	r := &deviceRun{dev: dev, sde: s.SDE, net: net, key: key, batch: batch, dim: s.Dim,
		x: tensor.New(dev, batch, n*s.Dim), z: tensor.New(dev, batch, n*s.Dim), tt: tensor.New(dev, batch), tape: autograd.NewTape(dev)}
	r.tape.SetNoGrad(true)
	// Prior: x = diag(PriorStd)·z with z the prior stream (philoxPrior).
	prior := hold.Step{ExpA: hold.Matrix{N: n}, CholA: hold.Matrix{N: n}}
	for k := range n {
		prior.CholA.Set(k, k, s.SDE.PriorStd(k))
	}
	if err := dev.FillNormal(r.z, rng.Stream{Key: key, ID: rng.StreamPrior}); err != nil {
		return 0, err
	}
	if err := dev.LieTrotterA(r.x, r.z, prior); err != nil {
		return 0, err
	}
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

// ltOn is LieTrotter.step on the device: A(t, h/2), score at t − h/2, B, A(t − h/2, h/2), with
// the closing half of a step and the opening half of the next fused into one kernel.
func (s *Sampler) ltOn(r *deviceRun) (int, error) {
	g := s.Grid
	if len(g) < 2 {
		return 0, nil
	}
	z2 := tensor.New(r.dev, r.batch, s.SDE.Blocks()*s.Dim)
	if err := r.noise(r.z); err != nil {
		return 0, err
	}
	if err := r.dev.LieTrotterA(r.x, r.z, s.SDE.AStep(g[0], (g[0]-g[1])/2)); err != nil {
		return 0, err
	}
	nfe := 0
	for i := 0; i+1 < len(g); i++ {
		t, h := g[i], g[i]-g[i+1]
		ts := t - h/2
		if lt, _ := s.Method.(LieTrotter); lt.ScoreAt == ScoreStart {
			ts = t
		}
		out, err := r.output(ts)
		if err != nil {
			return nfe, fmt.Errorf("step %d (t = %g): %w", i, t, err)
		}
		nfe++
		hNext := 0.0
		if i+2 < len(g) {
			hNext = g[i+1] - g[i+2]
		}
		st, err := cuda.NewLTStep(s.SDE, t, h, hNext, s.SDE.Ell(ts), false)
		if err != nil {
			return nfe, err
		}
		if err := r.noise(r.z); err != nil {
			return nfe, err
		}
		if st.Halves == 2 {
			if err := r.noise(z2); err != nil {
				return nfe, err
			}
		}
		if err := r.dev.LieTrotterStep(r.x, out, r.z, z2, st); err != nil {
			return nfe, fmt.Errorf("step %d (t = %g): %w", i, t, err)
		}
	}
	return nfe, nil
}

// emOn is EulerMaruyama.step on the device: the score at t, then x ← ExpA·x + CholA·z and
// x_n ← x_n + c·ℓ_t·E_θ (hold.SDE.EMStep); the noise is the last block's (B, d) draw, placed into
// the last block of a (B, n·d) tensor.
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
		out, err := r.output(t)
		if err != nil {
			return nfe, fmt.Errorf("step %d (t = %g): %w", i, t, err)
		}
		nfe++
		if err := r.noise(last); err != nil {
			return nfe, err
		}
		z := last
		if zeros != nil {
			z = tensor.Concat(r.z, 1, zeros, last)
		}
		st, c := s.SDE.EMStep(t, h)
		if err := r.dev.LieTrotterA(r.x, z, st); err != nil {
			return nfe, err
		}
		if err := r.dev.LieTrotterB(r.x, out, n, 1, c*s.SDE.Ell(t)); err != nil {
			return nfe, err
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
// clipping): on the CPU it returns nil. On a CUDA device the network of score (a Networked) moves
// there; for lt and em it returns the device and the network, for SampleOn and EachOn to keep the whole
// state on the device. The other samplers (ode's adaptive step control, heun, rk4, pc, Denoise) and a
// clipped score, which wraps the network, integrate their float64 state on the host and evaluate the
// network on the device (one state upload and one score download per evaluation): nil as well.
func (s *Sampler) DeviceFor(dev tensor.Device, score hold.Scorer, name string) (*cuda.Device, layers.ScoreNet, error) {
	if dev == tensor.CPU {
		return nil, nil, nil
	}
	cd, ok := dev.(*cuda.Device)
	if !ok {
		return nil, nil, fmt.Errorf("--device %s: sampling runs on cpu or cuda", name)
	}
	ns, ok := score.(Networked)
	if !ok {
		return nil, nil, fmt.Errorf("--device %s samples a trained network (--ckpt); the --oracle score runs on the CPU", name)
	}
	net := ns.Network()
	if err := net.Parameters().ToDevice(cd); err != nil {
		return nil, nil, fmt.Errorf("--device %s: %v", name, err)
	}
	if m := strings.TrimSuffix(s.Method.Name(), "@start"); (m != "lt" && m != "em") || s.Denoise || s.Score != score {
		return nil, nil, nil
	}
	return cd, net, nil
}
