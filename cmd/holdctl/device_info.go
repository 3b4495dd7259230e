package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/cuda"
	"holdgo/internal/devices"
)

// deviceCommand is 'holdctl device': open --device and say what it is, the preflight of the GPU
// bundle (gpubundle/run.sh). Opening a CUDA device loads cuBLAS and JIT-compiles the PTX, so a
// missing cuBLAS (with every path tried) or a JIT failure (with the JIT's log) shows here, with
// exit status 2.
func deviceCommand() *cli.Command {
	return &cli.Command{
		Name:  "device",
		Usage: "open --device and describe it: the GPU, the cuBLAS and NCCL loaded, the PTX JIT and its cache (exit 2 if it cannot be opened)",
		Flags: []cli.Flag{&cli.StringFlag{Name: "device", Value: "cuda", Usage: "cuda or cuda:N (or cpu)"}},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("device takes no arguments, got %q", c.Args().First())
			}
			t0 := time.Now()
			dev, err := devices.Open(c.String("device"))
			if err != nil {
				return usageErr("%v", err)
			}
			w := c.App.Writer
			fmt.Fprintf(w, "device: %s\n", c.String("device"))
			if cd, ok := dev.(*cuda.Device); ok {
				fmt.Fprintf(w, "backend: %s\n", devices.BackendName(cd.Backend()))
				fmt.Fprintf(w, "opened: in %.2f s (on a GPU: cuBLAS loaded, every PTX module JIT-compiled or read from the JIT cache)\n", time.Since(t0).Seconds())
			}
			for _, line := range devices.Libraries() {
				fmt.Fprintln(w, line)
			}
			return nil
		},
	}
}
