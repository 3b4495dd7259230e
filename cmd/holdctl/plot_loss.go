package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/plot"
)

func plotLossCommand() *cli.Command {
	return &cli.Command{
		Name:  "loss",
		Usage: "training loss against step (log step axis), one line per run (the runs' log.csv), smoothed",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "run", Required: true, Usage: "run directory (repeat for several; NAME=DIR names the line)"},
			&cli.IntFlag{Name: "smooth", Value: 10, Usage: "moving average over this many logged rows (1: none)"},
			&cli.StringFlag{Name: "title", Usage: "plot title"},
			&cli.StringFlag{Name: "out", Value: "loss.png", Usage: "output .png"},
		},
		Action: runPlotLoss,
	}
}

func runPlotLoss(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOut(false, "out", out); err != nil {
		return err
	}
	smooth := c.Int("smooth")
	if smooth < 1 || smooth > 10000 {
		return usageErr("plot loss: --smooth %d, want 1…10000", smooth)
	}
	var series []plot.Series
	for _, arg := range c.StringSlice("run") {
		name, dir := filepath.Base(filepath.Clean(arg)), arg
		if i := strings.IndexByte(arg, '='); i > 0 {
			name, dir = arg[:i], arg[i+1:]
		}
		s, err := experiment.LossSeries(name, filepath.Join(dir, logName), smooth)
		if err != nil {
			return usageErr("plot loss --run %s: %v", arg, err)
		}
		series = append(series, s)
	}
	if err := experiment.LossFigure(out, series, smooth, c.String("title")); err != nil {
		if errors.Is(err, plot.ErrBadValue) {
			return usageErr("plot loss: %v", err)
		}
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d runs\n", out, len(series))
	return nil
}
