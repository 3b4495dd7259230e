package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/internal/parallel"
	"holdgo/sample"
)

// holdctl model x0: how good a trained image network's data prediction x̂₀ is along the forward path,
// noise level by noise level — the diagnosis behind the x̂₀ samplers' behaviour on images (docs/images.md).

// modelX0Options are holdctl model x0's numeric settings.
type modelX0Options struct {
	N        int     `flag:"n" min:"1" max:"4096" help:"images"`
	Levels   int     `flag:"levels" min:"2" max:"100" help:"noise levels"`
	SigmaMin float64 `flag:"sigma-min" gt:"0" note:"below σ(T)" help:"smallest noise level"`
	Seed     uint64  `flag:"seed" help:"seed of the forward noise"`
	parallel.ThreadsOption
}

func modelX0Command() *cli.Command {
	opt := modelX0Options{N: 16, Levels: 12, SigmaMin: sample.DefaultSigmaMin, Seed: 1}
	return withConfig(&cli.Command{
		Name:  "x0",
		Usage: "the error of a trained image model's x̂₀ = E[q0 | x_t] along the forward path from test images, per noise level",
		Description: "Draws x_t = m_t q0 + L_t ε from the first --n images of --data (default: the test split of the run's\n" +
			"data) at --levels noise levels σ of the state's sufficient statistic, evenly spaced in log σ from σ(T) to\n" +
			"--sigma-min, and prints per level the time, σ, the RMS error of the network's x̂₀ (from its last-block\n" +
			"score: x̂₀ = (S + rᵀu)/(rᵀm_t), r = Σ_t⁻¹e_n), that error over σ (the error of the statistic c itself is\n" +
			"σ), and the RMS and largest |x̂₀| (data in [−1, 1]).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "trained image run or shipped model"},
			&cli.StringFlag{Name: "data", Usage: "images (default: the test split of the run's data)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines"},
		},
		Action: func(c *cli.Context) error { return runModelX0(c, opt) },
	}, &opt)
}

func runModelX0(c *cli.Context, opt modelX0Options) error {
	opt.Apply()
	return inputExit(experiment.RunX0(experiment.X0Run{Ckpt: c.String("ckpt"), Data: c.String("data"), N: opt.N, Levels: opt.Levels,
		SigmaMin: opt.SigmaMin, Seed: opt.Seed, JSON: c.Bool("json")}, c.App.Writer))
}
