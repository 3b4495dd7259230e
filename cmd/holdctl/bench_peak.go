package main

import (
	"encoding/json"
	"fmt"
	"runtime"
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
	threads := c.Int("threads")
	if threads == 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	r, err := bench.MeasurePeak(bench.PeakConfig{Threads: threads, Duration: c.Duration("duration"),
		TriadN: c.Int("triad-n"), Repeats: c.Int("repeats")})
	if err != nil {
		return err
	}
	if c.Bool("json") {
		return json.NewEncoder(c.App.Writer).Encode(r)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "FMA peak: independent FMA chains in registers, GFLOP/s (best of %d windows of %v); kernels use %s now\n",
		bench.PeakWindows, c.Duration("duration")/bench.PeakWindows, r.Active)
	many := fmt.Sprintf("%d threads", r.Threads)
	if r.Threads == 1 {
		many = "1 thread"
	}
	fmt.Fprintf(w, "%-8s %12s %12s %12s\n", "isa", "1 thread", many, "per thread")
	for _, l := range r.Levels {
		fmt.Fprintf(w, "%-8s %12.1f %12.1f %12.1f\n", l.ISA, l.One, l.Many, l.PerCore)
	}
	fmt.Fprintf(w, "triad a = b + s·c, 3×%d float32 (%.0f MiB): %.1f GB/s on 1 thread, %.1f GB/s on %d (median of %d)\n",
		r.TriadN, 12*float64(r.TriadN)/(1<<20), r.TriadOne, r.TriadAll, r.Threads, c.Int("repeats"))
	return nil
}
