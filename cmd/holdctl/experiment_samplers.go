package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
	"holdgo/sample"
)

// experimentSamplersCommand runs the W1-vs-NFE study of the samplers on the paper's 1-D mixture with
// the exact score (experiment.MixtureStudy):
//
//	holdctl experiment samplers --nfe 25,50,100 --grids quadratic --samples 20000 --format markdown
//
// experimentSamplersOptions are experiment samplers' numeric settings.
type experimentSamplersOptions struct {
	Samples   int     `flag:"samples" min:"2" max:"16777216" help:"samples per run"`
	Seed      uint64  `flag:"seed" help:"first seed (every cell uses the same seeds)"`
	Seeds     int     `flag:"seeds" min:"1" max:"1000" help:"seeds per cell (seed, seed+1, …); cells report the mean"`
	SigmaMin  float64 `flag:"sigma-min" gt:"0" lt:"1" help:"noise level σ of the sufficient statistic at which the σ-grids (edm, vpmatched, lambda, vplambda) end"`
	FloorReps int     `flag:"floor-reps" min:"1" max:"1000" help:"replicates of exact samples for the Monte-Carlo floor"`
	Workers   int     `flag:"workers" min:"1" max:"256" help:"chunks sampled in parallel"`
	OracleN   int     `flag:"oracle-n" min:"2" max:"1048576" help:"images in the empirical oracle (--data)"`
}

func experimentSamplersCommand() *cli.Command {
	opt := experimentSamplersOptions{Samples: 20000, Seed: 1, Seeds: 1, SigmaMin: sample.DefaultSigmaMin, FloorReps: 5, Workers: 1, OracleN: 1000}
	return withConfig(&cli.Command{
		Name:  "samplers",
		Usage: "W1 to the paper's 1-D mixture against NFE for the samplers, with the exact score",
		Description: "Runs each sampler (kind-method, e.g. hold-lt, cld-lt (SSCS), vp-xdpm2; hold-ode is the adaptive RK45 solver,\n" +
			"run per tolerance) on each grid at each NFE (denoising step included), and reports the exact W1\n" +
			"distance to the mixture and the within-mode width ratio, next to the Monte-Carlo floor of exact\n" +
			"samples of the same size; cells are the mean over --seeds seeds and, in brackets, the largest\n" +
			"|mode width ratio − 1|. Samplers are kind-method with kind hold, cld, vp or ve and method one of\n" +
			strings.Join(sample.MethodNames(), ", ") + " (the names and meanings of holdctl sample --sampler).\n" +
			"A run that fails (its grid, its coefficients or a step) is a cell \"error\" with the message under its\n" +
			"table (Markdown) or in the last column, error (CSV); the other runs go on. The exit status is 0 when at\n" +
			"least one run completed, 1 when every run failed (the table is written either way).",
		Flags: []cli.Flag{
			&cli.IntSliceFlag{Name: "nfe", Value: cli.NewIntSlice(25, 50, 100, 150, 250, 500, 1000), Usage: "score evaluations per sample"},
			&cli.StringSliceFlag{Name: "grids", Value: cli.NewStringSlice(sample.GridKinds...), Usage: "time grids: " + strings.Join(sample.GridKinds, ", ")},
			&cli.StringSliceFlag{Name: "samplers", Value: cli.NewStringSlice(experiment.DefaultStudySamplers...), Usage: "samplers as sde-method"},
			&cli.Float64SliceFlag{Name: "ode-tols", Value: cli.NewFloat64Slice(1e-2, 1e-3, 1e-4, 1e-5), Usage: "rtol = atol of the adaptive ODE runs"},
			&cli.BoolFlag{Name: "no-denoise", Usage: "drop the final denoising step"},
			&cli.StringSliceFlag{Name: "end-time", Usage: "end time per SDE as kind=t (defaults hold=1e-3, cld=1e-3, vp=1e-5)"},
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "output format: markdown or csv"},
			&cli.StringFlag{Name: "out", Usage: "write to this file instead of standard output"},
			&cli.StringFlag{Name: "data", Usage: "image data (fashion-mnist:DIR, mnist:DIR, cifar10:DIR, images:PATH): the empirical-distribution oracle of its first --oracle-n images instead of the 1-D mixture"},
			forceFlag(),
		},
		Action: func(c *cli.Context) error { return runExperimentSamplers(c, opt) },
	}, &opt)
}

func runExperimentSamplers(c *cli.Context, opt experimentSamplersOptions) error {
	format := c.String("format")
	if format != "markdown" && format != "csv" {
		return paramErr("experiment samplers", "unknown format %q (want markdown or csv)", format)
	}
	if err := checkBudget("samples", int64(opt.Samples)*int64(opt.FloorReps), 8*4); err != nil {
		return err
	}
	for _, n := range c.IntSlice("nfe") {
		if n < 2 || n > maxNFE {
			return paramErr("experiment samplers", "NFE %d: want 2 … %d", n, maxNFE)
		}
	}
	for _, tol := range c.Float64Slice("ode-tols") {
		if !(tol > 0 && tol < 1) { // NaN and negative tolerances failed every ODE run (exit 1), 0 ran the default
			return paramErr("experiment samplers", "--ode-tols %v: want tolerances in (0, 1)", tol)
		}
	}
	guard := outpath.New(c.Bool("force"))
	guard.Data(c.String("data"))
	if err := checkOutputs(guard, output{"out", c.String("out"), outpath.Text}); err != nil {
		return err
	}
	ends := map[string]float64{}
	for _, kv := range c.StringSlice("end-time") {
		kind, val, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return paramErr("experiment samplers", "end time %q: want kind=t with a finite t > 0", kv)
		}
		ends[kind] = v
	}
	if spec := c.String("data"); spec != "" {
		return runImageStudy(c, opt, spec, ends)
	}
	cfg := experiment.StudyConfig{
		NFEs: c.IntSlice("nfe"), Grids: c.StringSlice("grids"), Samplers: c.StringSlice("samplers"),
		ODETols: c.Float64Slice("ode-tols"), Samples: opt.Samples, Seed: opt.Seed, Seeds: opt.Seeds,
		NoDenoise: c.Bool("no-denoise"), EndTime: ends, FloorReps: opt.FloorReps, Workers: opt.Workers,
		SigmaMin: opt.SigmaMin,
	}
	tab, err := experiment.MixtureStudy(cfg)
	if err != nil {
		return studyErr(err)
	}
	err = writeStudy(c, func(w io.Writer) error {
		if format == "csv" {
			return tab.WriteCSV(w)
		}
		return tab.WriteMarkdown(w)
	})
	if err != nil {
		return err
	}
	if failed, total := tab.Failures(); failed > 0 && failed == total {
		return cli.Exit(fmt.Sprintf("holdctl experiment samplers: every run failed (%d); the first: %s", total, tab.FirstFailure()), 1)
	}
	return nil
}

// runImageStudy is experiment samplers --data: the empirical oracle of the first --oracle-n images,
// --samples samples per cell on the first of --grids; Markdown only.
func runImageStudy(c *cli.Context, opt experimentSamplersOptions, spec string, ends map[string]float64) error {
	tab, err := experiment.ImageStudyData(spec, opt.OracleN, experiment.ImageStudyConfig{Samplers: c.StringSlice("samplers"),
		NFEs: c.IntSlice("nfe"), Grid: c.StringSlice("grids")[0], Samples: opt.Samples, Seed: opt.Seed, EndTime: ends, Workers: opt.Workers})
	if err != nil {
		return studyErr(err)
	}
	return writeStudy(c, tab.WriteMarkdown)
}

// studyErr is a study's error: one of its parameters (experiment.ParamError) exits 2, another 1.
func studyErr(err error) error {
	var pe *experiment.ParamError
	if errors.As(err, &pe) {
		return paramErr("experiment samplers", "%v", err)
	}
	return fmt.Errorf("holdctl experiment samplers: %w", err)
}

// maxNFE bounds the NFE of a study cell.
const maxNFE = 1 << 20

// writeStudy writes the table to --out atomically (checked by the output
// guard before the study ran), or to standard output.
func writeStudy(c *cli.Context, write func(io.Writer) error) error {
	path := c.String("out")
	if path == "" {
		if err := write(c.App.Writer); err != nil {
			return fmt.Errorf("holdctl experiment samplers: write: %w", err)
		}
		return nil
	}
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("holdctl experiment samplers: write %s: %w", path, err)
	}
	return nil
}
