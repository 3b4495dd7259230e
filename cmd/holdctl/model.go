package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/layers"
)

func modelCommand() *cli.Command {
	return &cli.Command{
		Name:  "model",
		Usage: "inspect score networks",
		Subcommands: []*cli.Command{{
			Name:  "info",
			Usage: "print an NCSN++ configuration's size: trainable parameters (and, with --batch, one training step's memory, time, FLOPs and % of the FMA peak)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "model", Value: "ncsnpp-cifar10", Usage: strings.Join(layers.NCSNppPresets, ", ")},
				&cli.IntFlag{Name: "in-channels", Value: 9, Usage: "input channels n·C (HOLD-3 on RGB: 9)"},
				&cli.IntFlag{Name: "out-channels", Usage: "output channels (0: in-channels/3)"},
				&cli.IntFlag{Name: "image-size", Usage: "image side (0: the preset's)"},
				&cli.IntFlag{Name: "nf", Usage: "base channels (0: the preset's)"},
				&cli.IntFlag{Name: "res-blocks", Usage: "res-blocks per level (0: the preset's)"},
				&cli.IntFlag{Name: "batch", Usage: "also run one forward+backward at this batch and report its memory and time"},
				&cli.IntFlag{Name: "threads", Usage: "worker threads of --batch (default: all cores)"},
				&cli.BoolFlag{Name: "no-recycle", Usage: "keep every tensor of --batch's step until its end (autograd.RecycleOff), as before recycling"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			},
			Action: modelInfo,
		}, modelX0Command()},
	}
}

func modelInfo(c *cli.Context) error {
	cfg, err := layers.NCSNppPreset(c.String("model"), c.Int("in-channels"), c.Int("out-channels"), c.Int("image-size"))
	if err != nil {
		return usageErr("%v", err)
	}
	if c.Int("nf") > 0 {
		cfg.NF = c.Int("nf")
	}
	if c.Int("res-blocks") > 0 {
		cfg.NumResBlocks = c.Int("res-blocks")
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	r := bench.NewModelInfo(cfg)
	if err := checkInts(c, intRange{name: "batch", lo: 0, hi: 4096, note: "0: no step"}); err != nil {
		return err
	}
	if b := c.Int("batch"); b > 0 {
		// The activations of one step: a generous bound of 64 float32 maps of NF·4 channels per image.
		if err := checkBudget("batch", int64(b)*int64(cfg.ImageSize)*int64(cfg.ImageSize)*int64(cfg.NF)*4*64, 4); err != nil {
			return err
		}
		if err := setThreads(c); err != nil {
			return err
		}
		st, err := bench.ModelStep(cfg, b, !c.Bool("no-recycle"))
		if err != nil {
			return err
		}
		r.StepMemory = *st
	}
	return r.Write(c.App.Writer, c.Bool("json"))
}
