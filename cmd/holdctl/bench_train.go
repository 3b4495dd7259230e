package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

func benchTrainCommand() *cli.Command {
	cfg := bench.TrainRun{Model: "mlp", SDE: "hold", Steps: 5, Channels: 3, Precision: "tf32"}
	return withConfig(&cli.Command{
		Name: "train",
		Usage: "training steps of a score network on --device (cpu or cuda): time per step, samples/s and, on cuda, " +
			"kernel launches, host synchronisations and host↔device copies per step; --device record runs nothing and counts " +
			"what a step issues to a GPU (launches, GEMMs and FLOPs, kernel bytes by family, memsets, host syncs), in every build",
		Flags: []cli.Flag{&cli.StringFlag{Name: "device", Value: "cpu", Usage: "where the network runs: cpu, cuda / cuda:N (a binary " +
			"built with -tags cuda, or holdctl-shim: -tags cudashim), or record (nothing runs: the step's GPU work is counted)"}},
		Action: func(c *cli.Context) error { return benchErr(bench.RunTrain(cfg, c.String("device"), c.App.Writer)) },
	}, &cfg)
}

func benchConvCommand() *cli.Command {
	cfg := bench.ConvRun{Model: "ncsnpp-cifar10", Batch: 128, Channels: 3, Reps: 5}
	return withConfig(&cli.Command{
		Name: "conv",
		Usage: "the per-layer convolution table: every distinct convolution of --model's training step, forward, input " +
			"and weight gradient, each on the im2col path and the implicit-GEMM kernels in strict FP32 and TF32 (µs and " +
			"TFLOP/s, median of --reps, CUDA events) and the step's total per path",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "device", Value: "cuda", Usage: "the GPU: cuda or cuda:N (holdctl-shim: the host shim, CPU times)"}},
		Action: func(c *cli.Context) error { return benchErr(bench.RunConv(cfg, c.String("device"), c.App.Writer)) },
	}, &cfg)
}
