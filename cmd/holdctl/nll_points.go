package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/experiment"
	"holdgo/sample"
	"holdgo/train"
)

// Defaults of holdctl nll for point data (the image defaults are far smaller).
const (
	pointNLLPoints = 2000
	pointNLLBatch  = 1000
)

// runPointNLL is holdctl nll for a model of point data (gmm1d, swissroll, .npy): the bound on −log p
// per dimension of held-out points, as mean ± standard error, in nats and bits. Held-out points are
// fresh draws of the run's data with --data-seed (by default derived from, and never equal to, the
// training seed), or the points of a .npy file (--data). For mixture data the exact −log p of the
// same points is printed beside it.
func runPointNLL(c *cli.Context, opt nllOptions, m *train.Model, div sample.DivScorer) error {
	n, batch := opt.N, opt.Batch
	if !c.IsSet("n") {
		n = pointNLLPoints
	}
	if !c.IsSet("batch") {
		batch = pointNLLBatch
	}
	if n < 2 {
		return usageErr("nll: --n must be ≥ 2 for point data, got %d", n)
	}
	switch c.String("estimator") {
	case sample.EstimatorRademacher, sample.EstimatorGaussian, sample.EstimatorExact:
	default:
		return usageErr("nll: unknown --estimator %q (want rademacher, gaussian or exact)", c.String("estimator"))
	}
	if eps := opt.Eps; !(eps > 0 && eps < m.SDE.Horizon()) {
		return usageErr("nll: --eps %g must be in (0, T = %g)", eps, m.SDE.Horizon())
	}
	dim := m.Source.Dimension()
	seed := experiment.HeldOutSeed(m.Config.Seed)
	if c.IsSet("data-seed") {
		seed = opt.DataSeed
	}
	if seed == m.Config.Seed && c.String("data") == "" {
		return usageErr("nll: --data-seed %d is the training seed; held-out data need another", seed)
	}
	x, from, err := experiment.HeldOutPoints(m, c.String("data"), n, seed)
	if err != nil {
		return usageErr("nll: %v", err)
	}
	cfg := sample.LikelihoodConfig{Eps: opt.Eps, RTol: opt.Tol, ATol: opt.Tol,
		Estimator: c.String("estimator"), MaxBatch: batch, Workers: 1, Gauge: c.String("gauge")}
	start := time.Now()
	res, err := sample.NLL(m.SDE, div, x, dim, cfg, opt.Seed)
	if err != nil {
		return fmt.Errorf("nll: %w", err)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "checkpoint %s (%s, %d blocks, data %s); %d points: %s\n", train.CheckpointPath(c.String("ckpt")), m.Config.SDE,
		m.SDE.Blocks(), m.Config.Data, len(x)/dim, from)
	fmt.Fprintf(w, "NLL bound: %s nats/dim, %s bits/dim\n", res.NatsPerDim, res.BitsPerDim)
	fmt.Fprintf(w, "  with the drawn auxiliary values (same expectation, lower variance): %s nats/dim, %s bits/dim\n",
		res.NatsPerDimAux, res.BitsPerDimAux)
	fmt.Fprintf(w, "  probability-flow ODE%s from ε = %g, rtol = atol = %g, %s divergence, NFE %d, %.1fs\n",
		gaugeNote(c), cfg.Eps, cfg.RTol, cfg.Estimator, res.NFE, time.Since(start).Seconds())
	if mix, ok := m.Source.(data.Mixture); ok {
		nats, bits := experiment.ExactNLL(mix, x, dim)
		fmt.Fprintf(w, "exact −log p of the same points (the data's density): %s nats/dim, %s bits/dim\n", nats, bits)
	}
	return nil
}
