package main

import (
	"fmt"
	"math"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

// benchOpsCommand is 'holdctl bench ops': run the backend test table (tensor/optest) on a device
// against the Reference device (bench.Ops) and print the supported-ops matrix (ggml's test-backend-ops);
// with --perf, time every case instead (bench.OpsPerf).
func benchOpsCommand() *cli.Command {
	return &cli.Command{
		Name:  "ops",
		Usage: "run every op of the tensor op list on a device against the reference and print the supported-ops matrix; with --perf, time every case (µs, GFLOP/s, GB/s)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "device", Value: "cpu", Usage: "cpu, reference, cuda or cuda:N"},
			&cli.Float64Flag{Name: "tol", Value: 1e-4, Usage: "largest normalised MSE against the reference that passes (TF32 GEMMs reach ~1e-5)"},
			&cli.BoolFlag{Name: "perf", Usage: "time every case of the table on the device (median of 5 rounds) instead of checking it"},
			&cli.StringFlag{Name: "filter", Usage: "--perf: only the cases whose name contains this text (e.g. MatMul, Conv2d{n:2)"},
			&cli.DurationFlag{Name: "min-time", Value: 50 * time.Millisecond, Usage: "--perf: the time spent timing each case"},
		},
		Action: func(c *cli.Context) error {
			if tol := c.Float64("tol"); !(tol >= 0) || math.IsInf(tol, 0) { // +Inf passed every op
				return usageErr("bench ops: --tol %v: want a finite tolerance ≥ 0", tol)
			}
			if !c.Bool("perf") { // the check of every op ran in full, --filter or --min-time dropped silently
				perfOnly := map[string]string{"filter": c.String("filter"), "min-time": c.Duration("min-time").String()}
				for _, name := range []string{"filter", "min-time"} {
					if c.IsSet(name) {
						return usageErr("bench ops: --%s %s applies to --perf only: add --perf to time the cases, or drop it", name, perfOnly[name])
					}
				}
			}
			dev, err := openDevice(c.String("device"))
			if err != nil {
				return usageErr("bench ops: %v", err)
			}
			if c.Bool("perf") {
				if d := c.Duration("min-time"); d <= 0 || d > time.Minute {
					return usageErr("bench ops: --min-time must be in (0, 1m], got %v", d)
				}
				rows, failed := bench.OpsPerf(dev, c.String("filter"), c.Duration("min-time"))
				if len(rows) == 0 {
					return usageErr("bench ops: no case name contains %q", c.String("filter"))
				}
				bench.WriteOpsPerf(c.App.Writer, dev.Name(), rows)
				if failed > 0 {
					return cli.Exit(fmt.Sprintf("holdctl: bench ops --perf: %d of %d cases could not run on %s", failed, len(rows), dev.Name()), 1)
				}
				return nil
			}
			rows, failed := bench.Ops(dev, c.Float64("tol"))
			bench.WriteOps(c.App.Writer, dev.Name(), rows)
			if failed > 0 {
				return cli.Exit(fmt.Sprintf("holdctl: bench ops: %d of %d ops fail or are unsupported on %s", failed, len(rows), dev.Name()), 1)
			}
			return nil
		},
	}
}
