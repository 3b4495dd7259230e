package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/sample"
)

func benchSampleCommand() *cli.Command {
	opt := bench.SampleRun{SpecFlags: sample.DefaultSpecFlags(), Batch: 32, Seed: 1, Repeats: 5}
	return sampleHelp(withConfig(&cli.Command{
		Name: "sample",
		Usage: "sampling speed of a checkpoint: images/s and ms per network evaluation per image, next to the same network's " +
			"forward pass alone at the same batch (the time bench ncsnpp reports), and what the sampler adds",
		Action: func(c *cli.Context) error { return benchErr(bench.RunSample(opt, c.IsSet, c.App.Writer)) },
	}, &opt))
}
