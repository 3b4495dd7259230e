package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/experiment"
)

func plotLossCommand() *cli.Command {
	opt := struct {
		Smooth int `flag:"smooth" min:"1" max:"10000" note:"1: none" help:"moving average over this many logged rows (1: none)"`
	}{Smooth: 10}
	return withConfig(&cli.Command{
		Name:  "loss",
		Usage: "training loss against step (log step axis), one line per run (the runs' log.csv), smoothed",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "run", Required: true, Usage: "run directory (repeat for several; NAME=DIR names the line)"},
			&cli.StringFlag{Name: "title", Usage: "plot title"},
			&cli.StringFlag{Name: "out", Value: "loss.png", Usage: "output .png"},
		},
		Action: func(c *cli.Context) error {
			return inputExit(experiment.RunLoss(c.String("out"), c.StringSlice("run"), opt.Smooth, c.String("title"), c.App.Writer))
		},
	}, &opt)
}
