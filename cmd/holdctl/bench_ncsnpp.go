package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/bench"
	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
	"holdgo/internal/parallel"
	"holdgo/layers"
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
			&cli.StringFlag{Name: "cpuprofile", Usage: "write a pprof CPU profile of the holdgo runs to this file (atomically, at the end)"},
			&cli.BoolFlag{Name: "force", Usage: "let --cpuprofile replace an existing file of another kind (never an input, nor a run's own files)"},
		},
		Action: func(c *cli.Context) error {
			cases, err := bench.NCSNppCasesFor(strings.Split(c.String("models"), ","))
			if err != nil {
				return usageErr("--models: %v", err)
			}
			if err := checkThreads(c); err != nil {
				return err
			}
			for _, bc := range cases { // a training step's activations, as train and bench train check them
				cfg, err := layers.NCSNppPreset(bc.Model, bc.In, 0, 0)
				if err != nil {
					return err
				}
				what := fmt.Sprintf("bench ncsnpp: a training step of %s at batch %d (estimated; --models chooses the networks)", bc.Model, bc.Batch)
				if err := budget.Check(int64(min(cfg.TrainBytes(bc.Batch), 1<<62)), what); err != nil {
					return usageErr("%v", err)
				}
			}
			if c.Int("rounds") < 1 {
				return usageErr("--rounds %d: want at least 1", c.Int("rounds"))
			}
			isas, err := bench.OneDNNISAs(c.String("onednn-isa"))
			if err != nil {
				return usageErr("%v", err)
			}
			defer parallel.SetThreads(parallel.SetThreads(c.Int("threads")))
			// --cpuprofile: checked by the output guard first (never a run's file, an input, a link or
			// another kind of file without --force), collected in memory, written atomically at the end.
			var profile *bytes.Buffer
			path := c.String("cpuprofile")
			if path != "" {
				if err := checkOutputs(outpath.New(c.Bool("force")), output{"cpuprofile", path, outpath.Profile}); err != nil {
					return err
				}
				profile = new(bytes.Buffer)
			}
			var torch *bench.TorchOptions // --python "": no PyTorch
			if py := c.String("python"); py != "" {
				torch = &bench.TorchOptions{Python: py, Script: c.String("script"), ISAs: isas, Warn: c.App.ErrWriter}
			}
			var w io.Writer
			if profile != nil {
				w = profile
			}
			rows, err := bench.NCSNppAll(cases, max(1, c.Int("repeats")), c.Int("rounds"), torch, w)
			if err != nil {
				return err
			}
			if profile != nil {
				if err := atomicfile.WriteFile(path, profile.Bytes()); err != nil {
					return fmt.Errorf("--cpuprofile: %w", err)
				}
			}
			if c.Bool("json") {
				return json.NewEncoder(c.App.Writer).Encode(rows)
			}
			bench.WriteNCSNpp(c.App.Writer, rows)
			return nil
		},
	}
}
