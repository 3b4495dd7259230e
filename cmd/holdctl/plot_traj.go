package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/internal/outpath"
)

// The paper's Figures 8–9 for a trained image model: every channel of the state (q, p, s; four for
// HOLD-4) of a few samples at about ten times along the sampling path, and the same along the forward
// (noising) path from test images.

func plotTrajectoryCommand() *cli.Command {
	return &cli.Command{
		Name:  "trajectory",
		Usage: "Figures 8–9: every channel of the state of --n image samples along the sampling path and along the forward path from test images",
		Description: "Two blocks of rows in one PNG: the reverse (sampling) path on top, the forward path from the first --n\n" +
			"images of --data below; per sample one row per channel of the state (q, then p, s, …), and one column per\n" +
			"time, --times of them from T (left) to the end of the grid (right), evenly spaced in the log of the noise\n" +
			"level σ of the state's sufficient statistic. Each tile shows value / (2.5·std), std the channel's marginal\n" +
			"standard deviation at that time (data variance taken as 1/3), so every channel uses the grey range.\n" +
			"The times are printed.",
		Flags: append(samplerFlags(),
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "trained image run or shipped model"},
			&cli.StringFlag{Name: "data", Usage: "images for the forward path (default: the test split of the run's data)"},
			&cli.IntFlag{Name: "n", Value: 6, Usage: "samples (and test images)"},
			&cli.IntFlag{Name: "times", Value: 10, Usage: "times along each path"},
			&cli.IntFlag{Name: "scale", Value: 2, Usage: "pixel repetition of the tiles"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed of the sampler and of the forward noise"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
			&cli.StringFlag{Name: "out", Value: "trajectory.png", Usage: "output .png"},
		),
		Action: runPlotTrajectory,
	}
}

func runPlotTrajectory(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOut(false, "out", out); err != nil {
		return err
	}
	if err := checkSamplerSizes(c); err != nil {
		return err
	}
	n, nt, scale := c.Int("n"), c.Int("times"), c.Int("scale")
	if n < 1 || n > 64 || nt < 2 || nt > 40 || scale < 1 || scale > 8 {
		return usageErr("plot trajectory: want --n in 1…64, --times in 2…40, --scale in 1…8; got %d, %d, %d", n, nt, scale)
	}
	if err := setThreads(c); err != nil {
		return err
	}
	im, err := openImageModel(c, "plot trajectory", n)
	if err != nil {
		return err
	}
	guard := outpath.New(false) // the picture may not land in the test images' data set or replace the run's files
	guard.Input(c.String("ckpt"))
	guardData(guard, im.Spec)
	if err := checkOutputs(guard, output{"out", out, outpath.PNG}); err != nil {
		return err
	}
	m := im.Model
	spec := samplerSpecFrom(c)
	imageDefaults(c, m, &spec, c.App.Writer, false)
	s, err := spec.Build(m.SDE, m.Score, im.Data.Dimension())
	if err != nil {
		return usageErr("%v", err)
	}
	times, res, err := im.TrajectoryFigure(out, s, nt, n, scale, c.Uint64("seed"))
	if err != nil {
		return err
	}
	var labels []string
	for _, t := range times {
		labels = append(labels, fmt.Sprintf("%.4g", t))
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d samples × %d channels, sampler %s (NFE %d), then %d test images of %s forward; columns at t = %s\n",
		out, n, m.SDE.Blocks(), s.Method.Name(), res.NFE, n, im.Spec, strings.Join(labels, ", "))
	return nil
}

// openImageModel is experiment.OpenImageModel of --ckpt and --data, its errors usage errors of cmd.
func openImageModel(c *cli.Context, cmd string, n int) (*experiment.ImageModel, error) {
	im, err := experiment.OpenImageModel(c.String("ckpt"), c.String("data"), n)
	var de *experiment.DataError
	switch {
	case errors.As(err, &de):
		return nil, usageErr("%s %v", cmd, de)
	case err != nil:
		return nil, usageErr("%s: %v", cmd, err)
	}
	return im, nil
}
