package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
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
	return studyErr(experiment.RunSamplers(experiment.SamplersRun{Format: c.String("format"), NFEs: c.IntSlice("nfe"),
		Grids: c.StringSlice("grids"), Samplers: c.StringSlice("samplers"), ODETols: c.Float64Slice("ode-tols"),
		NoDenoise: c.Bool("no-denoise"), EndTimes: c.StringSlice("end-time"), Samples: opt.Samples, Seed: opt.Seed,
		Seeds: opt.Seeds, SigmaMin: opt.SigmaMin, FloorReps: opt.FloorReps, Workers: opt.Workers, Data: c.String("data"),
		OracleN: opt.OracleN, Out: c.String("out"), Force: c.Bool("force")}, c.App.Writer))
}

// studyErr is a study's error (experiment samplers', and experiment restore's writing of its tables):
// one of its parameters (experiment.ParamError) or inputs (experiment.InputError) exits 2, another 1.
func studyErr(err error) error {
	var ie *experiment.InputError
	var pe *experiment.ParamError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ie):
		return usageErr("%v", ie)
	case errors.As(err, &pe):
		return paramErr("experiment samplers", "%v", err)
	}
	return fmt.Errorf("holdctl experiment samplers: %w", err)
}
