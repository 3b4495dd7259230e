package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/parallel"
)

// The bench sizes' bounds (tags below): beyond them a run takes hours or more memory than a machine
// has; sides ≤ maxBenchSide (65536), repeats ≤ maxBenchRepeats (1048576).
const (
	maxBenchSide    = 1 << 16
	maxBenchRepeats = 1 << 20
)

type benchGemmConfig struct {
	M       int    `flag:"m" min:"1" max:"65536"`
	K       int    `flag:"k" min:"1" max:"65536"`
	N       int    `flag:"n" min:"1" max:"65536"`
	TransA  bool   `flag:"trans-a" help:"A is stored transposed (k×m)"`
	TransB  bool   `flag:"trans-b" help:"B is stored transposed (n×k)"`
	Threads int    `flag:"threads" min:"1" max:"256" help:"worker threads"`
	ISA     string `flag:"isa" help:"force avx512, avx2 or generic (default: best available)"`
	Repeats int    `flag:"repeats" min:"1" max:"1048576" help:"timed repeats (the median is reported)"`
	JSON    bool   `flag:"json" help:"print {\"gflops\": …} as JSON"`
}

type benchTriadConfig struct {
	N       int  `flag:"n" min:"1" max:"2147483648" help:"elements per array"`
	Threads int  `flag:"threads" min:"1" max:"256"`
	Repeats int  `flag:"repeats" min:"1" max:"1048576"`
	JSON    bool `flag:"json"`
}

type benchMLPConfig struct {
	Batch   int  `flag:"batch" min:"1" max:"1048576"`
	Hidden  int  `flag:"hidden" min:"1" max:"16384"`
	Threads int  `flag:"threads" min:"1" max:"256"`
	Repeats int  `flag:"repeats" min:"1" max:"1048576"`
	JSON    bool `flag:"json"`
}

func benchCommand() *cli.Command {
	gemm := benchGemmConfig{M: 512, K: 128, N: 128, Threads: 1, Repeats: 15}
	triad := benchTriadConfig{N: 1 << 24, Threads: 1, Repeats: 15}
	mlp := benchMLPConfig{Batch: 512, Hidden: 128, Threads: 2, Repeats: 200}
	return &cli.Command{
		Name:  "bench",
		Usage: "micro-benchmarks of the CPU kernels",
		Subcommands: []*cli.Command{
			withConfig(&cli.Command{
				Name:   "gemm",
				Usage:  "SGEMM C = A·B (row-major, float32): median GFLOP/s over repeats, and % of the FMA peak (bench peak)",
				Action: func(c *cli.Context) error { return benchGemm(c, gemm) },
			}, &gemm),
			withConfig(&cli.Command{
				Name:   "triad",
				Usage:  "memory bandwidth of a = b + s·c on 3×N float32 (GB/s, median of repeats)",
				Action: func(c *cli.Context) error { return benchTriad(c, triad) },
			}, &triad),
			withConfig(&cli.Command{
				Name:   "mlp",
				Usage:  "one training step of the toy score MLP (forward, loss, backward, clip, Adam, EMA): median ms, GFLOP/s and % of the FMA peak",
				Action: func(c *cli.Context) error { return benchMLP(c, mlp) },
			}, &mlp),
			benchPeakCommand(),
			benchOpsCommand(),
			benchNCSNppCommand(),
			benchSampleCommand(),
			benchKernelsCommand(),
			benchTrainCommand(),
		},
	}
}

func benchGemm(c *cli.Context, g benchGemmConfig) error {
	if err := checkBudget("m/--k/--n", int64(g.M)*int64(g.K)+int64(g.K)*int64(g.N)+int64(g.M)*int64(g.N), 4); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(g.Threads))
	cfg := bench.GemmConfig{M: g.M, K: g.K, N: g.N, TransA: g.TransA, TransB: g.TransB, ISA: g.ISA, Repeats: g.Repeats}
	res, err := bench.Gemm(cfg)
	if err != nil { // an unknown or unsupported --isa
		return usageErr("bench gemm: %v", err)
	}
	return bench.WriteGemm(c.App.Writer, cfg, g.Threads, res, g.JSON)
}

func benchTriad(c *cli.Context, t benchTriadConfig) error {
	if err := checkBudget("n", 3*int64(t.N), 4); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(t.Threads))
	return bench.WriteTriad(c.App.Writer, t.N, t.Threads, t.Repeats, bench.Triad(t.N, t.Repeats), t.JSON)
}

func benchMLP(c *cli.Context, m benchMLPConfig) error {
	if err := checkBudget("batch/--hidden", int64(m.Batch)*int64(m.Hidden)*16+int64(m.Hidden)*int64(m.Hidden)*16, 4); err != nil {
		return err
	}
	defer parallel.SetThreads(parallel.SetThreads(m.Threads))
	res, err := bench.MLP(m.Batch, m.Hidden, m.Repeats)
	if err != nil {
		return usageErr("bench mlp: %v", err)
	}
	return bench.WriteMLP(c.App.Writer, m.Batch, m.Hidden, m.Threads, m.Repeats, res, m.JSON)
}
