package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/internal/parallel"
	"holdgo/sample"
)

// The paper's Figures 8–9 for a trained image model: every channel of the state (q, p, s; four for
// HOLD-4) of a few samples at about ten times along the sampling path, and the same along the forward
// (noising) path from test images.

// plotTrajectoryOptions are holdctl plot trajectory's settings beside --ckpt, --data and --out.
type plotTrajectoryOptions struct {
	sample.SpecFlags
	N     int    `flag:"n" min:"1" max:"64" help:"samples (and test images)"`
	Times int    `flag:"times" min:"2" max:"40" help:"times along each path"`
	Scale int    `flag:"scale" min:"1" max:"8" help:"pixel repetition of the tiles"`
	Seed  uint64 `flag:"seed" help:"seed of the sampler and of the forward noise"`
	parallel.ThreadsOption
}

func plotTrajectoryCommand() *cli.Command {
	opt := plotTrajectoryOptions{SpecFlags: sample.DefaultSpecFlags(), N: 6, Times: 10, Scale: 2}
	return sampleHelp(withConfig(&cli.Command{
		Name:  "trajectory",
		Usage: "Figures 8–9: every channel of the state of --n image samples along the sampling path and along the forward path from test images",
		Description: "Two blocks of rows in one PNG: the reverse (sampling) path on top, the forward path from the first --n\n" +
			"images of --data below; per sample one row per channel of the state (q, then p, s, …), and one column per\n" +
			"time, --times of them from T (left) to the end of the grid (right), evenly spaced in the log of the noise\n" +
			"level σ of the state's sufficient statistic. Each tile shows value / (2.5·std), std the channel's marginal\n" +
			"standard deviation at that time (data variance taken as 1/3), so every channel uses the grey range.\n" +
			"The times are printed.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "trained image run or shipped model"},
			&cli.StringFlag{Name: "data", Usage: "images for the forward path (default: the test split of the run's data)"},
			&cli.StringFlag{Name: "out", Value: "trajectory.png", Usage: "output .png"},
		},
		Action: func(c *cli.Context) error { return runPlotTrajectory(c, opt) },
	}, &opt))
}

func runPlotTrajectory(c *cli.Context, opt plotTrajectoryOptions) error {
	opt.Apply()
	return inputExit(experiment.RunTrajectory(experiment.TrajectoryRun{Out: c.String("out"), Ckpt: c.String("ckpt"),
		Data: c.String("data"), Spec: opt.Spec(c.IsSet), IsSet: c.IsSet, N: opt.N, Times: opt.Times, Scale: opt.Scale,
		Seed: opt.Seed}, c.App.Writer))
}
