package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/cuda"
	"holdgo/internal/devices"
)

// benchKernelsCommand is 'holdctl bench kernels': time every CUDA kernel family with CUDA events
// (L2 flushed between repetitions) and print GB/s or GFLOP/s against the device's peak DRAM
// bandwidth, and the fused Lie–Trotter step against the unfused sequence. Needs a -tags cuda
// build and a GPU (or the host shim of a -tags cudashim build).
func benchKernelsCommand() *cli.Command {
	// 0 or a negative size used to fall back to the defaults silently; 2^40 elements or a GEMM of 2^16
	// are beyond any device (and the byte counts stay far from overflow).
	cfg := struct {
		Device   string `flag:"device" help:"GPU to time: cuda or cuda:N"`
		Elements int    `flag:"elements" min:"1" max:"1099511627776" help:"elements of the streaming workloads"`
		Gemm     int    `flag:"gemm" min:"1" max:"65536" help:"M = N = K of the GEMM workloads"`
		Reps     int    `flag:"reps" min:"1" max:"1048576" help:"timed repetitions per kernel (the median is reported)"`
	}{Device: "cuda", Elements: 1 << 24, Gemm: 4096, Reps: 20}
	return withConfig(&cli.Command{
		Name:  "kernels",
		Usage: "time every CUDA kernel on the GPU (needs a build with -tags cuda)",
		Action: func(c *cli.Context) error {
			return inputErr(devices.BenchKernels(c.App.Writer, cfg.Device, cuda.BenchOptions{Elements: cfg.Elements, GemmSize: cfg.Gemm, Reps: cfg.Reps}))
		},
	}, &cfg)
}
