package main

import (
	"encoding/json"
	"fmt"

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
	ta, tb := c.Bool("trans-a"), c.Bool("trans-b")
	res, err := bench.Gemm(bench.GemmConfig{M: m, K: k, N: n, TransA: ta, TransB: tb, ISA: c.String("isa"), Repeats: reps})
	if err != nil { // an unknown or unsupported --isa
		return usageErr("bench gemm: %v", err)
	}
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(map[string]any{
			"gflops": res.GFLOPS, "m": m, "k": k, "n": n, "trans_a": ta, "trans_b": tb,
			"threads": c.Int("threads"), "isa": res.ISA, "seconds": res.Time.Seconds(),
			"peak_gflops": res.PeakGFLOPS, "peak_pct": res.PeakPct,
		})
	}
	fmt.Fprintf(c.App.Writer, "sgemm %dx%dx%d (transA=%v transB=%v) %s, %d thread(s): %.1f GFLOP/s, %.0f %% of the %.1f GFLOP/s FMA peak (median of %d, %v)\n",
		m, k, n, ta, tb, res.ISA, c.Int("threads"), res.GFLOPS, res.PeakPct, res.PeakGFLOPS, reps, res.Time)
	return nil
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
	gbs := bench.Triad(n, reps)
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(map[string]any{"gbps": gbs, "n": n, "threads": c.Int("threads")})
	}
	fmt.Fprintf(c.App.Writer, "triad a = b + s·c, %d float32 elements, %d thread(s): %.1f GB/s (median of %d)\n", n, c.Int("threads"), gbs, reps)
	return nil
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
	ms := res.Time.Seconds() * 1e3
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(map[string]any{"ms": ms, "batch": batch,
			"hidden": c.Int("hidden"), "threads": c.Int("threads"), "isa": res.ISA, "gflop": float64(res.FLOPs) / 1e9,
			"gflops": res.GFLOPS, "peak_gflops": res.PeakGFLOPS, "peak_pct": res.PeakPct})
	}
	fmt.Fprintf(c.App.Writer, "toy MLP train step, batch %d, hidden %d, %s, %d thread(s): %.3f ms, %.2f GFLOP/s, %.1f %% of the %.1f GFLOP/s FMA peak (median of %d; %.1f MFLOP per step, op list)\n",
		batch, c.Int("hidden"), res.ISA, c.Int("threads"), ms, res.GFLOPS, res.PeakPct, res.PeakGFLOPS, reps, float64(res.FLOPs)/1e6)
	return nil
}
