package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/parallel"
	"holdgo/layers"
)

// modelInfoOptions are holdctl model info's numeric settings.
type modelInfoOptions struct {
	InChannels  int `flag:"in-channels" min:"1" max:"1048576" help:"input channels n·C (HOLD-3 on RGB: 9)"`
	OutChannels int `flag:"out-channels" min:"0" max:"1048576" note:"0: in-channels/3" help:"output channels (0: in-channels/3)"`
	ImageSize   int `flag:"image-size" min:"0" max:"16384" note:"0: the preset's" help:"image side (0: the preset's)"`
	NF          int `flag:"nf" min:"0" max:"4096" note:"0: the preset's" help:"base channels (0: the preset's)"`              // train.MaxChannels
	ResBlocks   int `flag:"res-blocks" min:"0" max:"64" note:"0: the preset's" help:"res-blocks per level (0: the preset's)"` // train.MaxResBlocks
	Batch       int `flag:"batch" min:"0" max:"4096" note:"0: no step" help:"also run one forward+backward at this batch and report its memory and time"`
	parallel.ThreadsOption
}

func modelCommand() *cli.Command {
	opt := modelInfoOptions{InChannels: 9}
	return &cli.Command{
		Name:  "model",
		Usage: "inspect score networks",
		Subcommands: []*cli.Command{withConfig(&cli.Command{
			Name:  "info",
			Usage: "print an NCSN++ configuration's size: trainable parameters (and, with --batch, one training step's memory, time, FLOPs and % of the FMA peak)",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "model", Value: "ncsnpp-cifar10", Usage: strings.Join(layers.NCSNppPresets, ", ")},
				&cli.BoolFlag{Name: "no-recycle", Usage: "keep every tensor of --batch's step until its end (autograd.RecycleOff), as before recycling"},
				&cli.BoolFlag{Name: "json", Usage: "print JSON"},
			},
			Action: func(c *cli.Context) error { return modelInfo(c, opt) },
		}, &opt), modelX0Command()},
	}
}

func modelInfo(c *cli.Context, opt modelInfoOptions) error {
	cfg, err := layers.NCSNppPreset(c.String("model"), opt.InChannels, opt.OutChannels, opt.ImageSize)
	if err != nil {
		return usageErr("%v", err)
	}
	if opt.NF > 0 {
		cfg.NF = opt.NF
	}
	if opt.ResBlocks > 0 {
		cfg.NumResBlocks = opt.ResBlocks
	}
	if err := cfg.Validate(); err != nil {
		return usageErr("%v", err)
	}
	r := bench.NewModelInfo(cfg)
	if b := opt.Batch; b > 0 {
		// The activations of one step: a generous bound of 64 float32 maps of NF·4 channels per image.
		if err := checkBudget("batch", int64(b)*int64(cfg.ImageSize)*int64(cfg.ImageSize)*int64(cfg.NF)*4*64, 4); err != nil {
			return err
		}
		opt.Apply()
		st, err := bench.ModelStep(cfg, b, !c.Bool("no-recycle"))
		if err != nil {
			return err
		}
		r.StepMemory = *st
	}
	return r.Write(c.App.Writer, c.Bool("json"))
}
