package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

func benchPeakCommand() *cli.Command {
	return &cli.Command{
		Name: "peak",
		Usage: "the machine's peak: FMA throughput of a register-only loop per instruction-set level (GFLOP/s, 1 and N threads) " +
			"and the triad bandwidth (GB/s); bench gemm, mlp, ncsnpp and model info --batch print % of this FMA peak",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "threads", Usage: "the many-thread column (0: all cores)"},
			&cli.DurationFlag{Name: "duration", Value: time.Second, Usage: "per FMA measurement (the best of 5 windows is reported)"},
			&cli.IntFlag{Name: "triad-n", Value: 1 << 24, Usage: "elements per triad array (3 float32 arrays, much larger than the caches)"},
			&cli.IntFlag{Name: "repeats", Value: 15, Usage: "timed triad repeats (the median is reported)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
		},
		Action: benchPeak,
	}
}

func benchPeak(c *cli.Context) error {
	if err := checkInts(c, intRange{name: "threads", lo: 0, hi: maxThreads, note: "0: all cores"},
		intRange{name: "triad-n", lo: 1, hi: 1 << 31}, intRange{name: "repeats", lo: 1, hi: maxBenchRepeats}); err != nil {
		return err
	}
	if d := c.Duration("duration"); d <= 0 || d > time.Hour {
		return usageErr("bench peak: --duration must be in (0, 1h], got %v", d)
	}
	if err := checkBudget("triad-n", 3*int64(c.Int("triad-n")), 4); err != nil {
		return err
	}
	cfg := bench.PeakConfig{Threads: c.Int("threads"), Duration: c.Duration("duration"), TriadN: c.Int("triad-n"), Repeats: c.Int("repeats")}
	r, err := bench.MeasurePeak(cfg)
	if err != nil {
		return err
	}
	return bench.WritePeak(c.App.Writer, cfg, r, c.Bool("json"))
}
