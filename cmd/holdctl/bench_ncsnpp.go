package main

import (
	"encoding/json"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/parallel"
)

func benchNCSNppCommand() *cli.Command {
	return &cli.Command{
		Name: "ncsnpp",
		Usage: "NCSN++ forward and forward+backward time per image (ncsnpp-small at batch 32, ncsnpp-cifar10 at batch 4), " +
			"and the same network in PyTorch CPU (scripts/bench_ncsnpp.py) in the same run",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "models", Value: "ncsnpp-small,ncsnpp-cifar10", Usage: "comma-separated presets"},
			&cli.IntFlag{Name: "threads", Value: 2, Usage: "worker threads (holdgo and torch)"},
			&cli.IntFlag{Name: "repeats", Value: 3, Usage: "timed repeats after one warm-up (the median is reported)"},
			&cli.IntFlag{Name: "rounds", Value: 1, Usage: "run holdgo and PyTorch this many times, alternating; " +
				"report the median round and the median of the rounds' speed-ups (robust to a shared machine's slow spells)"},
			&cli.StringFlag{Name: "python", Value: "/usr/bin/python3", Usage: "interpreter with torch (empty: skip PyTorch)"},
			&cli.StringFlag{Name: "script", Value: "scripts/bench_ncsnpp.py", Usage: "PyTorch benchmark script"},
			&cli.StringFlag{Name: "onednn-isa", Value: "ALL",
				Usage: "comma-separated ONEDNN_MAX_CPU_ISA values to run PyTorch under (ALL: oneDNN's own choice); " +
					"each row reports PyTorch's fastest"},
			&cli.BoolFlag{Name: "json", Usage: "print the rows as JSON"},
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a pprof CPU profile of the holdgo runs to this file"},
		},
		Action: func(c *cli.Context) error {
			cases, err := bench.NCSNppCasesFor(strings.Split(c.String("models"), ","))
			if err != nil {
				return usageErr("--models: %v", err)
			}
			if err := checkThreads(c); err != nil {
				return err
			}
			if c.Int("rounds") < 1 {
				return usageErr("--rounds %d: want at least 1", c.Int("rounds"))
			}
			isas, err := bench.OneDNNISAs(c.String("onednn-isa"))
			if err != nil {
				return usageErr("%v", err)
			}
			defer parallel.SetThreads(parallel.SetThreads(c.Int("threads")))
			var profile io.Writer // --cpuprofile
			if path := c.String("cpuprofile"); path != "" {
				f, err := os.Create(path)
				if err != nil {
					return err
				}
				defer f.Close()
				profile = f
			}
			var torch *bench.TorchOptions // --python "": no PyTorch
			if py := c.String("python"); py != "" {
				torch = &bench.TorchOptions{Python: py, Script: c.String("script"), ISAs: isas, Warn: c.App.ErrWriter}
			}
			rows, err := bench.NCSNppAll(cases, max(1, c.Int("repeats")), c.Int("rounds"), torch, profile)
			if err != nil {
				return err
			}
			if c.Bool("json") {
				return json.NewEncoder(c.App.Writer).Encode(rows)
			}
			bench.WriteNCSNpp(c.App.Writer, rows)
			return nil
		},
	}
}
