package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/metrics"
	"holdgo/train"
)

// evalCommand compares generated points with the data distribution:
//
//	holdctl eval --data gmm1d samples.npy
//	holdctl eval --ckpt runs/hold --n 5000 --json --samples samples.npy
func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "distances between samples (.npy) and the data: sliced Wasserstein, MMD, energy distance (1-D mixture: exact W1, mode weights)",
		ArgsUsage: "[SAMPLES.npy]",
		Description: "Draws --n fresh points of the data (--data, or the data of the run --ckpt) and reports, for the\n" +
			"samples and, as the floor to read them against, for a second independent draw of the data of the\n" +
			"same size: the sliced Wasserstein-2 distance, the squared MMD with an RBF kernel of median-heuristic\n" +
			"bandwidth and the energy distance (these two on at most --kernel-points points of each set), and the\n" +
			"improved precision and recall of Kynkäänniemi et al. 2019 (--pr-k nearest neighbours; for the multi\n" +
			"Swiss roll also per roll). For the paper's 1-D mixture (gmm1d) also the exact W1 to the mixture and\n" +
			"the share of samples per mode.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "samples", Usage: "samples (.npy, (n, d)); or give the file as the last argument"},
			&cli.StringFlag{Name: "data", Value: data.NameGMM1D, Usage: "data distribution: gmm1d, swissroll or a .npy file of points"},
			&cli.Float64Flag{Name: "swiss-noise", Value: data.DefaultSwissNoise, Usage: "noise of the Swiss rolls"},
			&cli.StringFlag{Name: "ckpt", Usage: "take the data distribution of this run (directory or checkpoint) instead of --data"},
			&cli.IntFlag{Name: "n", Value: 5000, Usage: "fresh data points to compare with"},
			&cli.IntFlag{Name: "kernel-points", Value: 2000, Usage: "points of each set used by MMD and the energy distance (O(n²))"},
			&cli.IntFlag{Name: "projections", Value: 256, Usage: "directions of the sliced Wasserstein distance"},
			&cli.IntFlag{Name: "pr-k", Value: metrics.DefaultPRK, Usage: "nearest neighbours of the improved precision and recall (0: skip them; O(n²))"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the fresh data and the projections"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			trainDataFlag(),
		},
		Action: runEval,
	}
}

func runEval(c *cli.Context) error {
	path := c.String("samples")
	switch {
	case c.NArg() > 1 || (c.NArg() == 1 && path != ""):
		return usageErr("eval takes one samples file (--samples FILE or a last argument; flags go before it), got %q",
			append([]string{path}, c.Args().Slice()...))
	case c.NArg() == 1:
		path = c.Args().First()
	case path == "":
		return usageErr("eval needs the samples: --samples FILE.npy")
	}
	if !strings.HasSuffix(path, ".npy") {
		return usageErr("eval: %s: want a .npy file of samples", path)
	}
	n, kp, proj := c.Int("n"), c.Int("kernel-points"), c.Int("projections")
	if n < 2 || kp < 2 || proj < 1 {
		return usageErr("eval: --n (%d) and --kernel-points (%d) must be ≥ 2, --projections (%d) ≥ 1", n, kp, proj)
	}
	if err := checkInts(c, intRange{name: "n", lo: 2, hi: 1 << 26}, intRange{name: "kernel-points", lo: 2, hi: 1 << 16},
		intRange{name: "projections", lo: 1, hi: 1 << 16}); err != nil {
		return err
	}
	if k := c.Int("pr-k"); k < 0 || k >= n {
		return usageErr("eval: --pr-k %d: want 0 (skip) or a neighbour count below --n (%d)", k, n)
	}
	var (
		src data.Source
		err error
	)
	if c.IsSet("ckpt") {
		if c.IsSet("data") {
			return usageErr("eval: give either --data or --ckpt, not both")
		}
		m, err := train.LoadModel(c.String("ckpt"), false, c.String("train-data"))
		if err != nil {
			return usageErr("eval: %v", err)
		}
		src = m.Source
	} else if src, err = data.Open(c.String("data"), c.Float64("swiss-noise")); err != nil {
		return usageErr("eval: %v", err)
	}
	x, dim, err := metrics.ReadSamples(path, src, c.Int("pr-k"))
	if err != nil {
		return usageErr("eval: %v", err)
	}
	rep, err := metrics.Eval(x, dim, src, metrics.EvalOptions{Samples: path, N: n, KernelPoints: kp, Projections: proj,
		PRK: c.Int("pr-k"), Seed: c.Uint64("seed")})
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return rep.Write(c.App.Writer, c.Bool("json"), proj, kp)
}
