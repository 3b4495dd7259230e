package main

import (
	"encoding/json"
	"errors"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

func benchSampleCommand() *cli.Command {
	flags := append(samplerFlags(),
		&cli.StringFlag{Name: "ckpt", Required: true, Usage: "trained run directory or checkpoint file"},
		&cli.IntFlag{Name: "batch", Value: 32, Usage: "images sampled, every network evaluation one forward pass of them all"},
		&cli.Uint64Flag{Name: "seed", Value: 1},
		&cli.IntFlag{Name: "repeats", Value: 5, Usage: "timed forward passes (the median is reported)"},
		&cli.BoolFlag{Name: "json", Usage: "print the result as JSON"},
	)
	return &cli.Command{
		Name: "sample",
		Usage: "sampling speed of a checkpoint: images/s and ms per network evaluation per image, next to the same network's " +
			"forward pass alone at the same batch (the time bench ncsnpp reports), and what the sampler adds",
		Flags:  flags,
		Action: benchSample,
	}
}

func benchSample(c *cli.Context) error {
	if err := checkInts(c, intRange{name: "batch", lo: 1, hi: 1 << 16}, intRange{name: "repeats", lo: 1, hi: maxBenchRepeats}); err != nil {
		return err
	}
	if err := checkSamplerSizes(c); err != nil {
		return err
	}
	r, err := bench.Sample(bench.SampleConfig{Ckpt: c.String("ckpt"), Spec: samplerSpecFrom(c), Batch: c.Int("batch"), Seed: c.Uint64("seed"), Repeats: c.Int("repeats")})
	var ie *bench.SampleInputError
	if errors.As(err, &ie) { // the checkpoint, the sampler flags, a batch over --max-memory
		return usageErr("%v", ie)
	}
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(r)
	}
	bench.WriteSample(c.App.Writer, r)
	return nil
}
