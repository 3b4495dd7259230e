package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/parallel"
)

func benchCommand() *cli.Command {
	return &cli.Command{
		Name:  "bench",
		Usage: "micro-benchmarks of the CPU kernels",
		Subcommands: []*cli.Command{
			{
				Name:  "gemm",
				Usage: "SGEMM C = A·B (row-major, float32): median GFLOP/s over repeats, and % of the FMA peak (bench peak)",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "m", Value: 512}, &cli.IntFlag{Name: "k", Value: 128}, &cli.IntFlag{Name: "n", Value: 128},
					&cli.BoolFlag{Name: "trans-a", Usage: "A is stored transposed (k×m)"},
					&cli.BoolFlag{Name: "trans-b", Usage: "B is stored transposed (n×k)"},
					&cli.IntFlag{Name: "threads", Value: 1, Usage: "worker threads"},
					&cli.StringFlag{Name: "isa", Usage: "force avx512, avx2 or generic (default: best available)"},
					&cli.IntFlag{Name: "repeats", Value: 15, Usage: "timed repeats (the median is reported)"},
					&cli.BoolFlag{Name: "json", Usage: `print {"gflops": …} as JSON`},
				},
				Action: benchGemm,
			},
			{
				Name:  "triad",
				Usage: "memory bandwidth of a = b + s·c on 3×N float32 (GB/s, median of repeats)",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "n", Value: 1 << 24, Usage: "elements per array"},
					&cli.IntFlag{Name: "threads", Value: 1},
					&cli.IntFlag{Name: "repeats", Value: 15},
					&cli.BoolFlag{Name: "json"},
				},
				Action: benchTriad,
			},
			{
				Name:  "mlp",
				Usage: "one training step of the toy score MLP (forward, loss, backward, clip, Adam, EMA): median ms, GFLOP/s and % of the FMA peak",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "batch", Value: 512}, &cli.IntFlag{Name: "hidden", Value: 128},
					&cli.IntFlag{Name: "threads", Value: 2}, &cli.IntFlag{Name: "repeats", Value: 200},
					&cli.BoolFlag{Name: "json"},
				},
				Action: benchMLP,
			},
			benchPeakCommand(),
			benchOpsCommand(),
			benchNCSNppCommand(),
			benchSampleCommand(),
			benchKernelsCommand(),
			benchTrainCommand(),
		},
	}
}

// Bounds of the bench sizes: beyond them a run takes hours or more memory than a machine has.
const (
	maxBenchSide    = 1 << 16
	maxBenchRepeats = 1 << 20
)

func benchGemm(c *cli.Context) error {
	m, k, n, reps := c.Int("m"), c.Int("k"), c.Int("n"), c.Int("repeats")
	if m < 1 || k < 1 || n < 1 || reps < 1 || c.Int("threads") < 1 {
		return usageErr("bench gemm: --m, --k, --n, --threads and --repeats must be ≥ 1")
	}
	if err := checkInts(c, intRange{name: "m", lo: 1, hi: maxBenchSide}, intRange{name: "k", lo: 1, hi: maxBenchSide},
		intRange{name: "n", lo: 1, hi: maxBenchSide}, intRange{name: "repeats", lo: 1, hi: maxBenchRepeats}, intRange{name: "threads", lo: 1, hi: maxThreads}); err != nil {
		return err
	}
	if err := checkBudget("m/--k/--n", int64(m)*int64(k)+int64(k)*int64(n)+int64(m)*int64(n), 4); err != nil {
		return err
	}
	if err := checkThreads(c); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(c.Int("threads")))
	cfg := bench.GemmConfig{M: m, K: k, N: n, TransA: c.Bool("trans-a"), TransB: c.Bool("trans-b"), ISA: c.String("isa"), Repeats: reps}
	res, err := bench.Gemm(cfg)
	if err != nil { // an unknown or unsupported --isa
		return usageErr("bench gemm: %v", err)
	}
	return bench.WriteGemm(c.App.Writer, cfg, c.Int("threads"), res, c.Bool("json"))
}

func benchTriad(c *cli.Context) error {
	n, reps := c.Int("n"), c.Int("repeats")
	if n < 1 || reps < 1 || c.Int("threads") < 1 {
		return usageErr("bench triad: --n, --threads and --repeats must be ≥ 1")
	}
	if err := checkInts(c, intRange{name: "n", lo: 1, hi: 1 << 31}, intRange{name: "repeats", lo: 1, hi: maxBenchRepeats}); err != nil {
		return err
	}
	if err := checkBudget("n", 3*int64(n), 4); err != nil {
		return err
	}
	if err := checkThreads(c); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(c.Int("threads")))
	return bench.WriteTriad(c.App.Writer, n, c.Int("threads"), reps, bench.Triad(n, reps), c.Bool("json"))
}

func benchMLP(c *cli.Context) error {
	batch, reps := c.Int("batch"), c.Int("repeats")
	if batch < 1 || reps < 1 || c.Int("threads") < 1 || c.Int("hidden") < 1 {
		return usageErr("bench mlp: --batch, --hidden, --threads and --repeats must be ≥ 1")
	}
	if err := checkInts(c, intRange{name: "batch", lo: 1, hi: 1 << 20}, intRange{name: "hidden", lo: 1, hi: 1 << 14},
		intRange{name: "repeats", lo: 1, hi: maxBenchRepeats}); err != nil {
		return err
	}
	if err := checkBudget("batch/--hidden", int64(batch)*int64(c.Int("hidden"))*16+int64(c.Int("hidden"))*int64(c.Int("hidden"))*16, 4); err != nil {
		return err
	}
	if err := checkThreads(c); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(c.Int("threads")))
	res, err := bench.MLP(batch, c.Int("hidden"), reps)
	if err != nil {
		return usageErr("bench mlp: %v", err)
	}
	return bench.WriteMLP(c.App.Writer, batch, c.Int("hidden"), c.Int("threads"), reps, res, c.Bool("json"))
}
