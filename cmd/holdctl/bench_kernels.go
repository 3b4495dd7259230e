package main

import (
	"github.com/urfave/cli/v2"
)

// benchKernelsCommand is 'holdctl bench kernels': time every CUDA kernel family with CUDA events
// (L2 flushed between repetitions) and print GB/s or GFLOP/s against the device's peak DRAM
// bandwidth, and the fused Lie–Trotter step against the unfused sequence. Needs a -tags cuda
// build and a GPU.
func benchKernelsCommand() *cli.Command {
	return &cli.Command{
		Name:  "kernels",
		Usage: "time every CUDA kernel on the GPU (needs a build with -tags cuda)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "device", Value: "cuda", Usage: "GPU to time: cuda or cuda:N"},
			&cli.IntFlag{Name: "elements", Value: 1 << 24, Usage: "elements of the streaming workloads"},
			&cli.IntFlag{Name: "gemm", Value: 4096, Usage: "M = N = K of the GEMM workloads"},
			&cli.IntFlag{Name: "reps", Value: 20, Usage: "timed repetitions per kernel (the median is reported)"},
		},
		Action: func(c *cli.Context) error {
			return benchKernels(c.App.Writer, c.String("device"),
				benchOptions{Elements: c.Int("elements"), GemmSize: c.Int("gemm"), Reps: c.Int("reps")})
		},
	}
}
