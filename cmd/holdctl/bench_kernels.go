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
			// 0 or a negative size used to fall back to the defaults silently; 2^40 elements or a
			// GEMM of 2^16 are beyond any device (and the byte counts below stay far from overflow).
			if err := checkInts(c, intRange{name: "elements", lo: 1, hi: 1 << 40}, intRange{name: "gemm", lo: 1, hi: maxBenchSide},
				intRange{name: "reps", lo: 1, hi: maxBenchRepeats}); err != nil {
				return err
			}
			return benchKernels(c.App.Writer, c.String("device"),
				benchOptions{Elements: c.Int("elements"), GemmSize: c.Int("gemm"), Reps: c.Int("reps")})
		},
	}
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
