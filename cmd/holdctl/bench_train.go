package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/devices"
	"holdgo/tensor"
)

func benchTrainCommand() *cli.Command {
	cfg := struct {
		Model    string `flag:"model" help:"mlp (the toy score network on 2-D points) or an NCSN++ preset: ncsnpp-tiny, ncsnpp-small, ncsnpp-cifar10"`
		SDE      string `flag:"sde" help:"hold, cld, vp or ve"`
		Batch    int    `flag:"batch" min:"0" max:"4096" note:"0: the model's default" help:"batch size (0: 512 for mlp, 4 for ncsnpp)"`
		Steps    int    `flag:"steps" min:"1" max:"1048576" help:"timed steps after one warm-up step"`
		Channels int    `flag:"channels" min:"1" max:"64" help:"NCSN++ image channels"`
	}{Model: "mlp", SDE: "hold", Steps: 5, Channels: 3}
	return withConfig(&cli.Command{
		Name: "train",
		Usage: "training steps of a score network on --device (cpu or cuda): time per step, samples/s and, on cuda, " +
			"kernel launches, host synchronisations and host↔device copies per step",
		Flags: []cli.Flag{deviceFlag()},
		Action: func(c *cli.Context) error {
			dev, err := devices.Open(c.String("device"))
			if err != nil {
				return usageErr("%v", err)
			}
			return benchTrain(c.App.Writer, dev, cfg.Model, cfg.SDE, cfg.Batch, cfg.Steps, cfg.Channels)
		},
	}, &cfg)
}

// benchTrain times bench train's steps on dev (counting launches, syncs and copies on a CUDA device)
// and prints them.
func benchTrain(w io.Writer, dev tensor.Device, model, sdeKind string, batch, steps, channels int) error {
	dev, counting := bench.CountingDevice(dev)
	res, err := bench.Train(dev, counting, model, sdeKind, batch, steps, channels)
	if err != nil {
		return usageErr("%v", err)
	}
	bench.WriteTrain(w, res, steps)
	return nil
}
