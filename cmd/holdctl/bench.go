package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

// benchCommand is 'holdctl bench': each subcommand binds its flags to its bench configuration
// (bench.GemmRun, …) and runs it (bench.RunGemm, …).
func benchCommand() *cli.Command {
	gemm := bench.GemmRun{M: 512, K: 128, N: 128, Threads: 1, Repeats: 15}
	triad := bench.TriadRun{N: 1 << 24, Threads: 1, Repeats: 15}
	mlp := bench.MLPRun{Batch: 512, Hidden: 128, Threads: 2, Repeats: 200}
	peak := bench.PeakRun{Duration: time.Second, TriadN: 1 << 24, Repeats: 15}
	ncsnpp := bench.DefaultNCSNppRun()
	return &cli.Command{
		Name:  "bench",
		Usage: "micro-benchmarks of the CPU kernels",
		Subcommands: []*cli.Command{
			withConfig(&cli.Command{
				Name:   "gemm",
				Usage:  "SGEMM C = A·B (row-major, float32): median GFLOP/s over repeats, and % of the FMA peak (bench peak)",
				Action: func(c *cli.Context) error { return benchErr(bench.RunGemm(gemm, c.App.Writer)) },
			}, &gemm),
			withConfig(&cli.Command{
				Name:   "triad",
				Usage:  "memory bandwidth of a = b + s·c on 3×N float32 (GB/s, median of repeats)",
				Action: func(c *cli.Context) error { return benchErr(bench.RunTriad(triad, c.App.Writer)) },
			}, &triad),
			withConfig(&cli.Command{
				Name:   "mlp",
				Usage:  "one training step of the toy score MLP (forward, loss, backward, clip, Adam, EMA): median ms, GFLOP/s and % of the FMA peak",
				Action: func(c *cli.Context) error { return benchErr(bench.RunMLP(mlp, c.App.Writer)) },
			}, &mlp),
			withConfig(&cli.Command{
				Name: "peak",
				Usage: "the machine's peak: FMA throughput of a register-only loop per instruction-set level (GFLOP/s, 1 and N threads) " +
					"and the triad bandwidth (GB/s); bench gemm, mlp, ncsnpp and model info --batch print % of this FMA peak",
				Action: func(c *cli.Context) error { return benchErr(bench.RunPeak(peak, c.App.Writer)) },
			}, &peak),
			benchOpsCommand(),
			withConfig(&cli.Command{
				Name: "ncsnpp",
				Usage: "NCSN++ forward and forward+backward time per image (ncsnpp-small at batch 32, ncsnpp-cifar10 at batch 4), " +
					"and the same network in PyTorch CPU (scripts/bench_ncsnpp.py) in the same run",
				Action: func(c *cli.Context) error { return benchErr(bench.RunNCSNpp(ncsnpp, c.App.Writer, c.App.ErrWriter)) },
			}, &ncsnpp),
			benchSampleCommand(),
			benchKernelsCommand(),
			benchTrainCommand(),
			benchConvCommand(),
		},
	}
}

// benchErr is a benchmark's error: one about its settings or input (bench.InputError) exits with
// status 2, another as it is (status 1).
func benchErr(err error) error {
	var ie *bench.InputError
	if errors.As(err, &ie) {
		return usageErr("%v", ie)
	}
	return err
}

// benchOpsCommand is 'holdctl bench ops': run the backend test table (tensor/optest) on a device
// against the Reference device (bench.Ops) and print the supported-ops matrix (ggml's test-backend-ops);
// with --perf, time every case instead (bench.OpsPerf).
func benchOpsCommand() *cli.Command {
	cfg := bench.OpsRun{Device: "cpu", Tol: 1e-4, MinTime: 50 * time.Millisecond}
	return withConfig(&cli.Command{
		Name:  "ops",
		Usage: "run every op of the tensor op list on a device against the reference and print the supported-ops matrix; with --perf, time every case (µs, GFLOP/s, GB/s)",
		Action: func(c *cli.Context) error {
			err := bench.RunOps(cfg, c.IsSet, c.App.Writer)
			var ie *bench.InputError
			if err != nil && !errors.As(err, &ie) { // ops that fail or cannot run: status 1
				return fmt.Errorf("holdctl: %w", err)
			}
			return benchErr(err)
		},
	}, &cfg)
}
