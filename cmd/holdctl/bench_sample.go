package main

import (
	"encoding/json"
	"errors"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/sample"
)

// benchSampleOptions are holdctl bench sample's settings.
type benchSampleOptions struct {
	sample.SpecFlags
	Ckpt    string `flag:"ckpt" required:"true" help:"trained run directory or checkpoint file"`
	Batch   int    `flag:"batch" min:"1" max:"65536" help:"images sampled, every network evaluation one forward pass of them all"`
	Seed    uint64 `flag:"seed" help:"random seed"`
	Repeats int    `flag:"repeats" min:"1" max:"1048576" help:"timed forward passes (the median is reported)"` // maxBenchRepeats
	JSON    bool   `flag:"json" help:"print the result as JSON"`
}

func benchSampleCommand() *cli.Command {
	opt := benchSampleOptions{SpecFlags: sample.DefaultSpecFlags(), Batch: 32, Seed: 1, Repeats: 5}
	return sampleHelp(withConfig(&cli.Command{
		Name: "sample",
		Usage: "sampling speed of a checkpoint: images/s and ms per network evaluation per image, next to the same network's " +
			"forward pass alone at the same batch (the time bench ncsnpp reports), and what the sampler adds",
		Action: func(c *cli.Context) error { return benchSample(c, opt) },
	}, &opt))
}

func benchSample(c *cli.Context, opt benchSampleOptions) error {
	r, err := bench.Sample(bench.SampleConfig{Ckpt: opt.Ckpt, Spec: opt.Spec(c.IsSet), Batch: opt.Batch, Seed: opt.Seed, Repeats: opt.Repeats})
	var ie *bench.SampleInputError
	if errors.As(err, &ie) { // the checkpoint, the sampler flags, a batch over --max-memory
		return usageErr("%v", ie)
	}
	if err != nil {
		return err
	}
	if opt.JSON {
		return json.NewEncoder(c.App.Writer).Encode(r)
	}
	bench.WriteSample(c.App.Writer, r)
	return nil
}
