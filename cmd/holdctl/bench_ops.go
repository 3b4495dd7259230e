package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/devices"
)

// benchOpsCommand is 'holdctl bench ops': run the backend test table (tensor/optest) on a device
// against the Reference device (bench.Ops) and print the supported-ops matrix (ggml's test-backend-ops);
// with --perf, time every case instead (bench.OpsPerf).
func benchOpsCommand() *cli.Command {
	cfg := struct {
		Device  string        `flag:"device" help:"cpu, reference, cuda or cuda:N"`
		Tol     float64       `flag:"tol" min:"0" help:"largest normalised MSE against the reference that passes (TF32 GEMMs reach ~1e-5)"` // +Inf passed every op
		Perf    bool          `flag:"perf" help:"time every case of the table on the device (median of 5 rounds) instead of checking it"`
		Filter  string        `flag:"filter" help:"--perf: only the cases whose name contains this text (e.g. MatMul, Conv2d{n:2)"`
		MinTime time.Duration `flag:"min-time" gt:"0" max:"6e10" help:"--perf: the time spent timing each case"` // (0, 1m]
	}{Device: "cpu", Tol: 1e-4, MinTime: 50 * time.Millisecond}
	return withConfig(&cli.Command{
		Name:  "ops",
		Usage: "run every op of the tensor op list on a device against the reference and print the supported-ops matrix; with --perf, time every case (µs, GFLOP/s, GB/s)",
		Action: func(c *cli.Context) error {
			if !cfg.Perf { // the check of every op ran in full, --filter or --min-time dropped silently
				perfOnly := map[string]string{"filter": cfg.Filter, "min-time": cfg.MinTime.String()}
				for _, name := range []string{"filter", "min-time"} {
					if c.IsSet(name) {
						return usageErr("bench ops: --%s %s applies to --perf only: add --perf to time the cases, or drop it", name, perfOnly[name])
					}
				}
			}
			dev, err := devices.Open(cfg.Device)
			if err != nil {
				return usageErr("bench ops: %v", err)
			}
			if cfg.Perf {
				rows, failed := bench.OpsPerf(dev, cfg.Filter, cfg.MinTime)
				if len(rows) == 0 {
					return usageErr("bench ops: no case name contains %q", cfg.Filter)
				}
				bench.WriteOpsPerf(c.App.Writer, dev.Name(), rows)
				if failed > 0 {
					return cli.Exit(fmt.Sprintf("holdctl: bench ops --perf: %d of %d cases could not run on %s", failed, len(rows), dev.Name()), 1)
				}
				return nil
			}
			rows, failed := bench.Ops(dev, cfg.Tol)
			bench.WriteOps(c.App.Writer, dev.Name(), rows)
			if failed > 0 {
				return cli.Exit(fmt.Sprintf("holdctl: bench ops: %d of %d ops fail or are unsupported on %s", failed, len(rows), dev.Name()), 1)
			}
			return nil
		},
	}, &cfg)
}
