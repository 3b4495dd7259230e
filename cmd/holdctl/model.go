package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/clibind"
	"holdgo/layers"
)

func modelCommand() *cli.Command {
	opt := bench.ModelInfoRun{InChannels: 9, Model: "ncsnpp-cifar10"}
	info := withConfig(&cli.Command{
		Name:   "info",
		Usage:  "print an NCSN++ configuration's size: trainable parameters (and, with --batch, one training step's memory, time, FLOPs and % of the FMA peak)",
		Action: func(c *cli.Context) error { return benchErr(bench.RunModelInfo(opt, c.App.Writer)) },
	}, &opt)
	clibind.SetUsage(info, "model", strings.Join(layers.NCSNppPresets, ", "))
	return &cli.Command{
		Name:        "model",
		Usage:       "inspect score networks",
		Subcommands: []*cli.Command{info, modelX0Command()},
	}
}
