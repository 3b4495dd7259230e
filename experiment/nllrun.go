package experiment

import (
	"fmt"
	"io"
	"time"

	"holdgo/data"
	"holdgo/imagedata"
	"holdgo/internal/budget"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// Defaults of holdctl nll for point data (the image defaults are far smaller).
const (
	pointNLLPoints = 2000
	pointNLLBatch  = 1000
)

// NLLRun is holdctl nll after its flags are read: the likelihood bound of held-out data under a
// checkpoint.
type NLLRun struct {
	IsSet     func(flag string) bool // whether a flag was given: --ckpt, and for point data --n, --batch, --data-seed
	Ckpt      string
	Raw       bool   // the raw weights instead of the EMA weights
	TrainData string // a run on a .npy file: its points from this file
	Data      string // the held-out data ("": the run's own, for images its test split)
	Estimator string // the divergence's estimator
	Gauge     string // the flow integrated: kernel or aligned
	N, Batch  int
	Tol, Eps  float64 // rtol = atol of the ODE solver; its start time
	Clip      float64 // threshold images' x̂₀ to [−Clip, Clip] (0: the network's own flow)
	Seed      uint64  // of dequantisation, auxiliary variables and ε
	DataSeed  uint64  // point data: of the held-out draws (if given)
	Device    string  // the network's evaluations and vector–Jacobian products run there
	Open      func(name string) (tensor.Device, error)
}

// RunNLL loads the model, moves its network to the device, and prints on w the bound of the images
// (bits/dim) or, for a model of point data, of held-out points (nats and bits per dimension, with the
// exact −log p of mixture data). Errors of the settings and inputs are InputErrors.
func RunNLL(r NLLRun, w io.Writer) error {
	if !r.IsSet("ckpt") {
		return inputErr("nll needs --ckpt DIR (a run trained on images)")
	}
	if r.Gauge != sample.GaugeKernel && r.Gauge != sample.GaugeAligned {
		return inputErr("--gauge %q: want kernel or aligned", r.Gauge)
	}
	m, err := train.LoadModel(r.Ckpt, r.Raw, r.TrainData)
	if err != nil {
		return &InputError{err}
	}
	// The ODE state and the estimator stay on the host.
	dev, err := r.Open(r.Device)
	if err != nil {
		return &InputError{err}
	}
	if ns, ok := m.Score.(*train.NetworkScorer); ok {
		if err := ns.Net.Parameters().ToDevice(dev); err != nil {
			return inputErr("--device %s: %v", r.Device, err)
		}
	}
	div, ok := m.Score.(sample.DivScorer)
	if !ok {
		return inputErr("the score of %s has no vector–Jacobian product", r.Ckpt)
	}
	if !imagedata.IsSpec(m.Config.Data) {
		if r.Clip != 0 {
			return inputErr("--clip thresholds images' x̂₀ to the data range; %s was trained on points", r.Ckpt)
		}
		return r.points(m, div, w)
	}
	ds, spec, err := NLLImages(m, r.Data)
	if err != nil {
		return &InputError{err}
	}
	n := min(r.N, ds.Len())
	if n < 1 {
		return inputErr("--n must be ≥ 1")
	}
	if err := budget.CheckCount(int64(n), int64(ds.Dimension())*8, "--n"); err != nil {
		return &InputError{err}
	}
	cfg := sample.LikelihoodConfig{Eps: r.Eps, RTol: r.Tol, ATol: r.Tol,
		Estimator: r.Estimator, MaxBatch: r.Batch, Gauge: r.Gauge, Clip: r.Clip}
	start := time.Now()
	res, err := ImageNLL(m, div, ds, n, cfg, r.Seed)
	if err != nil {
		return err
	}
	clip := ""
	if r.Clip > 0 {
		clip = fmt.Sprintf(", x̂₀ clipped to ±%g", r.Clip)
	}
	fmt.Fprintf(w, "%s: %d images of %s, %s%s%s: %s bits/dim (aux-corrected %s), NFE %d, %.1fs\n",
		r.Ckpt, n, spec, m.Config.SDE, r.gaugeNote(), clip, res.BitsPerDim, res.BitsPerDimAux, res.NFE, time.Since(start).Seconds())
	return nil
}

// gaugeNote is ", aligned gauge" for --gauge aligned and "" for the default.
func (r NLLRun) gaugeNote() string {
	if r.Gauge == sample.GaugeAligned {
		return ", aligned gauge"
	}
	return ""
}

// points is holdctl nll for a model of point data (gmm1d, swissroll, .npy): the bound on −log p per
// dimension of held-out points, as mean ± standard error, in nats and bits. Held-out points are fresh
// draws of the run's data with --data-seed (by default derived from, and never equal to, the training
// seed), or the points of a .npy file (--data). For mixture data the exact −log p of the same points is
// printed beside it.
func (r NLLRun) points(m *train.Model, div sample.DivScorer, w io.Writer) error {
	n, batch := r.N, r.Batch
	if !r.IsSet("n") {
		n = pointNLLPoints
	}
	if !r.IsSet("batch") {
		batch = pointNLLBatch
	}
	if n < 2 {
		return inputErr("nll: --n must be ≥ 2 for point data, got %d", n)
	}
	switch r.Estimator {
	case sample.EstimatorRademacher, sample.EstimatorGaussian, sample.EstimatorExact:
	default:
		return inputErr("nll: unknown --estimator %q (want rademacher, gaussian or exact)", r.Estimator)
	}
	if eps := r.Eps; !(eps > 0 && eps < m.SDE.Horizon()) {
		return inputErr("nll: --eps %g must be in (0, T = %g)", eps, m.SDE.Horizon())
	}
	dim := m.Source.Dimension()
	seed := HeldOutSeed(m.Config.Seed)
	if r.IsSet("data-seed") {
		seed = r.DataSeed
	}
	if seed == m.Config.Seed && r.Data == "" {
		return inputErr("nll: --data-seed %d is the training seed; held-out data need another", seed)
	}
	x, from, err := HeldOutPoints(m, r.Data, n, seed)
	if err != nil {
		return inputErr("nll: %v", err)
	}
	cfg := sample.LikelihoodConfig{Eps: r.Eps, RTol: r.Tol, ATol: r.Tol,
		Estimator: r.Estimator, MaxBatch: batch, Workers: 1, Gauge: r.Gauge}
	start := time.Now()
	res, err := sample.NLL(m.SDE, div, x, dim, cfg, r.Seed)
	if err != nil {
		return fmt.Errorf("nll: %w", err)
	}
	fmt.Fprintf(w, "checkpoint %s (%s, %d blocks, data %s); %d points: %s\n", train.CheckpointPath(r.Ckpt), m.Config.SDE,
		m.SDE.Blocks(), m.Config.Data, len(x)/dim, from)
	fmt.Fprintf(w, "NLL bound: %s nats/dim, %s bits/dim\n", res.NatsPerDim, res.BitsPerDim)
	fmt.Fprintf(w, "  with the drawn auxiliary values (same expectation, lower variance): %s nats/dim, %s bits/dim\n",
		res.NatsPerDimAux, res.BitsPerDimAux)
	fmt.Fprintf(w, "  probability-flow ODE%s from ε = %g, rtol = atol = %g, %s divergence, NFE %d, %.1fs\n",
		r.gaugeNote(), cfg.Eps, cfg.RTol, cfg.Estimator, res.NFE, time.Since(start).Seconds())
	if mix, ok := m.Source.(data.Mixture); ok {
		nats, bits := ExactNLL(mix, x, dim)
		fmt.Fprintf(w, "exact −log p of the same points (the data's density): %s nats/dim, %s bits/dim\n", nats, bits)
	}
	return nil
}
