package main

import (
	"encoding/json"
	"fmt"
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

// modelReport is what model info prints.
type modelReport struct {
	Model           string `json:"model"`
	InChannels      int    `json:"in_channels"`
	OutChannels     int    `json:"out_channels"`
	ImageSize       int    `json:"image_size"`
	NF              int    `json:"nf"`
	ChMult          []int  `json:"ch_mult"`
	ResBlocks       int    `json:"num_res_blocks"`
	AttnResolutions []int  `json:"attn_resolutions"`
	Embedding       string `json:"embedding"`
	Params          int    `json:"params"`       // trainable
	FixedParams     int    `json:"fixed_params"` // the Fourier weights: checkpointed, not trained
	bench.StepMemory
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
	r := modelReport{Model: cfg.Name, InChannels: cfg.InChannels, OutChannels: cfg.OutChannels, ImageSize: cfg.ImageSize,
		NF: cfg.NF, ChMult: cfg.ChMult, ResBlocks: cfg.NumResBlocks, AttnResolutions: cfg.AttnResolutions,
		Embedding: cfg.Embedding, Params: layers.NCSNppParamCount(cfg)}
	if cfg.Embedding == layers.EmbedFourier {
		r.FixedParams = cfg.NF
	}
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
	if c.Bool("json") {
		out, _ := json.Marshal(r)
		fmt.Fprintln(c.App.Writer, string(out))
		return nil
	}
	w := c.App.Writer
	fmt.Fprintf(w, "%s: %d → %d channels at %d×%d, nf %d, ch_mult %v, %d res-blocks per level, attention at %v, %s embedding\n",
		r.Model, r.InChannels, r.OutChannels, r.ImageSize, r.ImageSize, r.NF, r.ChMult, r.ResBlocks, r.AttnResolutions, r.Embedding)
	fmt.Fprintf(w, "trainable parameters: %d (%.1f M)", r.Params, float64(r.Params)/1e6)
	if r.FixedParams > 0 {
		fmt.Fprintf(w, ", plus %d fixed Fourier weights", r.FixedParams)
	}
	fmt.Fprintln(w)
	if r.Batch > 0 {
		recycle := "recycling"
		if !r.Recycle {
			recycle = "no recycling"
		}
		fmt.Fprintf(w, "training step at batch %d (%s): %.1f MiB of activations after the forward pass, %.1f MiB of tensors at the peak (forward + backward), %.1f MiB allocated in all; forward %.0f ms, forward+backward %.0f ms\n",
			r.Batch, recycle, r.ForwardMiB, r.PeakMiB, r.StepMiB, r.ForwardMs, r.StepMs)
		fmt.Fprintf(w, "FLOPs (op list, convolutions as direct): forward %.2f GFLOP, %.1f GFLOP/s, %.1f %% of peak; forward+backward %.2f GFLOP, %.1f GFLOP/s, %.1f %% of peak (the %s FMA peak on %d thread(s): %.1f GFLOP/s)\n",
			r.ForwardGFLOP, r.ForwardGFLOPS, r.ForwardPct, r.StepGFLOP, r.StepGFLOPS, r.StepPct, r.ISA, r.Threads, r.PeakGFLOPS)
	}
	return nil
}
