package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/tensor"
)

func benchTrainCommand() *cli.Command {
	return &cli.Command{
		Name: "train",
		Usage: "training steps of a score network on --device (cpu or cuda): time per step, samples/s and, on cuda, " +
			"kernel launches, host synchronisations and host↔device copies per step",
		Flags: []cli.Flag{
			deviceFlag(),
			&cli.StringFlag{Name: "model", Value: "mlp", Usage: "mlp (the toy score network on 2-D points) or an NCSN++ preset: ncsnpp-tiny, ncsnpp-small, ncsnpp-cifar10"},
			&cli.StringFlag{Name: "sde", Value: "hold", Usage: "hold, cld, vp or ve"},
			&cli.IntFlag{Name: "batch", Value: 0, Usage: "batch size (0: 512 for mlp, 4 for ncsnpp)"},
			&cli.IntFlag{Name: "steps", Value: 5, Usage: "timed steps after one warm-up step"},
			&cli.IntFlag{Name: "channels", Value: 3, Usage: "NCSN++ image channels"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("bench train takes no arguments, got %q", c.Args().First())
			}
			if c.Int("steps") < 1 {
				return usageErr("--steps must be ≥ 1")
			}
			if err := checkInts(c, intRange{name: "steps", lo: 1, hi: maxBenchRepeats}, intRange{name: "batch", lo: 0, hi: 4096, note: "0: the model's default"},
				intRange{name: "channels", lo: 1, hi: 64}); err != nil {
				return err
			}
			dev, err := openDevice(c.String("device"))
			if err != nil {
				return usageErr("%v", err)
			}
			return benchTrain(c.App.Writer, dev, c.String("model"), c.String("sde"), c.Int("batch"), c.Int("steps"), c.Int("channels"))
		},
	}
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
