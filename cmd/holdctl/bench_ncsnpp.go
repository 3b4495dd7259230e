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
	cfg := struct {
		Models  string `flag:"models" help:"comma-separated presets"`
		Threads int    `flag:"threads" min:"0" max:"256" note:"0: all cores" help:"worker threads (holdgo and torch)"`
		Repeats int    `flag:"repeats" min:"1" max:"1048576" help:"timed repeats after one warm-up (the median is reported)"`
		Rounds  int    `flag:"rounds" min:"1" max:"1048576" help:"run holdgo and PyTorch this many times, alternating; report the median round and the median of the rounds' speed-ups (robust to a shared machine's slow spells)"`
	}{Models: "ncsnpp-small,ncsnpp-cifar10", Threads: 2, Repeats: 3, Rounds: 1}
	return withConfig(&cli.Command{
		Name: "ncsnpp",
		Usage: "NCSN++ forward and forward+backward time per image (ncsnpp-small at batch 32, ncsnpp-cifar10 at batch 4), " +
			"and the same network in PyTorch CPU (scripts/bench_ncsnpp.py) in the same run",
		Flags: []cli.Flag{
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
			cases, err := bench.NCSNppCasesFor(strings.Split(cfg.Models, ","))
			if err != nil {
				return usageErr("--models: %v", err)
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
			isas, err := bench.OneDNNISAs(c.String("onednn-isa"))
			if err != nil {
				return usageErr("%v", err)
			}
			defer parallel.SetThreads(parallel.SetThreads(cfg.Threads))
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
			rows, err := bench.NCSNppAll(cases, cfg.Repeats, cfg.Rounds, torch, w)
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
	}, &cfg)
}
