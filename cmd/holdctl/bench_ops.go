package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
)

// benchOpsCommand is 'holdctl bench ops': run the backend test table (tensor/optest) on a device
// against the Reference device (bench.Ops) and print the supported-ops matrix (ggml's test-backend-ops).
func benchOpsCommand() *cli.Command {
	return &cli.Command{
		Name:  "ops",
		Usage: "run every op of the tensor op list on a device against the reference and print the supported-ops matrix",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "device", Value: "cpu", Usage: "cpu, reference, cuda or cuda:N"},
			&cli.Float64Flag{Name: "tol", Value: 1e-4, Usage: "largest normalised MSE against the reference that passes (TF32 GEMMs reach ~1e-5)"},
		},
		Action: func(c *cli.Context) error {
			if !(c.Float64("tol") >= 0) {
				return usageErr("bench ops: --tol must be ≥ 0")
			}
			dev, err := openDevice(c.String("device"))
			if err != nil {
				return usageErr("bench ops: %v", err)
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
