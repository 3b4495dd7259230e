package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

func benchTrainCommand() *cli.Command {
	cfg := bench.TrainRun{Model: "mlp", SDE: "hold", Steps: 5, Channels: 3}
	return withConfig(&cli.Command{
		Name: "train",
		Usage: "training steps of a score network on --device (cpu or cuda): time per step, samples/s and, on cuda, " +
			"kernel launches, host synchronisations and host↔device copies per step",
		Flags:  []cli.Flag{deviceFlag()},
		Action: func(c *cli.Context) error { return benchErr(bench.RunTrain(cfg, c.String("device"), c.App.Writer)) },
	}, &cfg)
}
