package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/cuda"
	"holdgo/internal/budget"
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
			return benchKernels(c.App.Writer, cfg.Device, benchOptions{Elements: cfg.Elements, GemmSize: cfg.Gemm, Reps: cfg.Reps})
		},
	}, &cfg)
}

// checkKernelMemory refuses (exit 2) a kernel benchmark whose buffers would not fit the memory
// budget, naming both size flags with their values and what each alone needs, before anything is
// allocated. A GPU
// keeps the workloads' tensors in its own memory and only the staging of one upload counts
// (onHost false); on the host shim the device memory is host memory too (onHost true).
func checkKernelMemory(o cuda.BenchOptions, onHost bool) error {
	need := func(o cuda.BenchOptions) int64 {
		m := cuda.BenchMemoryOf(o)
		if onHost {
			return m.Device + m.Host
		}
		return m.Host
	}
	total := need(o)
	if total <= budget.Limit() {
		return nil
	}
	where := "host memory for staging the uploads"
	if onHost {
		where = "host memory (the shim's device memory is host memory)"
	}
	alone := func(o cuda.BenchOptions) string { return budget.Format(need(o)) }
	return usageErr("bench kernels --elements %d --gemm %d: the workloads need %s of %s, over the memory budget of %s (--max-memory); give a smaller --elements (%d alone needs %s) or --gemm (%d alone needs %s)",
		o.Elements, o.GemmSize, budget.Format(total), where, budget.Format(budget.Limit()),
		o.Elements, alone(cuda.BenchOptions{Elements: o.Elements, GemmSize: 1}), o.GemmSize, alone(cuda.BenchOptions{Elements: 1, GemmSize: o.GemmSize}))
}
