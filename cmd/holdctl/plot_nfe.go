package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/plot"
)

// plotNFECommand draws a sampler study's metric against NFE on log axes, one line per sampler:
//
//	holdctl experiment samplers --format csv --out study.csv && holdctl plot nfe --csv study.csv --out nfe.png
func plotNFECommand() *cli.Command {
	return &cli.Command{
		Name:  "nfe",
		Usage: "W1 (or another metric) against NFE on log axes, one line per sampler, from the CSV of experiment samplers or experiment nfe",
		Description: "Reads the CSV of 'holdctl experiment samplers --format csv' (columns sampler, grid, nfe, w1, …: each\n" +
			"sampler's best grid at each NFE, or --grid NAME) or of 'holdctl experiment nfe' (columns model, sampler,\n" +
			"nfe, metric, value). The Monte-Carlo floor rows, when present, are drawn as a flat line.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "csv", Usage: "the study's CSV file (required)"},
			&cli.StringFlag{Name: "out", Value: "nfe.png", Usage: "output .png"},
			&cli.StringFlag{Name: "metric", Value: "w1", Usage: "column to plot (experiment samplers CSV)"},
			&cli.StringFlag{Name: "grid", Value: "best", Usage: "time grid to plot, or best: each sampler's lowest value over its grids"},
			&cli.StringFlag{Name: "title", Usage: "plot title"},
			forceFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return usageErr("plot nfe: unexpected argument %q", c.Args().First())
			}
			path := c.String("csv")
			if path == "" {
				return usageErr("plot nfe: --csv FILE is required (the output of experiment samplers --format csv or experiment nfe)")
			}
			if err := checkPNGOut(c.Bool("force"), "out", c.String("out"), path); err != nil {
				return err
			}
			series, metric, err := experiment.ReadNFECSVFile(path, c.String("metric"), c.String("grid"))
			if err != nil {
				return usageErr("plot nfe: %v", err)
			}
			opt := plot.LogLogOptions{Title: c.String("title"), XLabel: "NFE (score evaluations per sample)", YLabel: metric}
			if err := plot.LogLog(c.String("out"), series, opt); err != nil {
				return usageErr("%v", err)
			}
			fmt.Fprintf(c.App.Writer, "wrote %s: %d lines\n", c.String("out"), len(series))
			return nil
		},
	}
}
