package main

import (
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

type benchPeakConfig struct {
	Threads  int           `flag:"threads" min:"0" max:"256" note:"0: all cores" help:"the many-thread column (0: all cores)"`
	Duration time.Duration `flag:"duration" gt:"0" max:"3.6e12" help:"per FMA measurement (the best of 5 windows is reported)"` // (0, 1h]
	TriadN   int           `flag:"triad-n" min:"1" max:"2147483648" help:"elements per triad array (3 float32 arrays, much larger than the caches)"`
	Repeats  int           `flag:"repeats" min:"1" max:"1048576" help:"timed triad repeats (the median is reported)"`
	JSON     bool          `flag:"json" help:"print the report as JSON"`
}

func benchPeakCommand() *cli.Command {
	cfg := benchPeakConfig{Duration: time.Second, TriadN: 1 << 24, Repeats: 15}
	return withConfig(&cli.Command{
		Name: "peak",
		Usage: "the machine's peak: FMA throughput of a register-only loop per instruction-set level (GFLOP/s, 1 and N threads) " +
			"and the triad bandwidth (GB/s); bench gemm, mlp, ncsnpp and model info --batch print % of this FMA peak",
		Action: func(c *cli.Context) error { return benchPeak(c, cfg) },
	}, &cfg)
}

func benchPeak(c *cli.Context, p benchPeakConfig) error {
	if err := checkBudget("triad-n", 3*int64(p.TriadN), 4); err != nil {
		return err
	}
	cfg := bench.PeakConfig{Threads: p.Threads, Duration: p.Duration, TriadN: p.TriadN, Repeats: p.Repeats}
	r, err := bench.MeasurePeak(cfg)
	if err != nil {
		return err
	}
	return bench.WritePeak(c.App.Writer, cfg, r, p.JSON)
}
