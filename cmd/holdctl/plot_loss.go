package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/plot"
)

func plotLossCommand() *cli.Command {
	opt := struct {
		Smooth int `flag:"smooth" min:"1" max:"10000" note:"1: none" help:"moving average over this many logged rows (1: none)"`
	}{Smooth: 10}
	return withConfig(&cli.Command{
		Name:  "loss",
		Usage: "training loss against step (log step axis), one line per run (the runs' log.csv), smoothed",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "run", Required: true, Usage: "run directory (repeat for several; NAME=DIR names the line)"},
			&cli.StringFlag{Name: "title", Usage: "plot title"},
			&cli.StringFlag{Name: "out", Value: "loss.png", Usage: "output .png"},
		},
		Action: func(c *cli.Context) error { return runPlotLoss(c, opt.Smooth) },
	}, &opt)
}

func runPlotLoss(c *cli.Context, smooth int) error {
	out := c.String("out")
	if err := checkPNGOut(false, "out", out); err != nil {
		return err
	}
	runs, err := lossRuns(c.StringSlice("run"))
	if err != nil {
		return err
	}
	var series []plot.Series
	for _, r := range runs {
		s, err := experiment.LossSeries(r.name, filepath.Join(r.dir, logName), smooth)
		if err != nil {
			return usageErr("plot loss --run %s: %v", r.arg, err)
		}
		series = append(series, s)
	}
	if err := experiment.LossFigure(out, series, smooth, c.String("title")); err != nil {
		if errors.Is(err, plot.ErrBadValue) {
			return usageErr("plot loss: %v", err)
		}
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d runs\n", out, len(series))
	return nil
}

// lossRun is one --run of plot loss: the line's name and the run directory.
type lossRun struct{ arg, name, dir string }

// lossRuns reads the --run values (DIR, or NAME=DIR) and refuses two lines of one name (the legend
// could not tell them apart; a name taken from DIR's base name counts) and one run given twice (the
// same directory however spelled, through a link or not), naming the duplicate.
func lossRuns(args []string) ([]lossRun, error) {
	var runs []lossRun
	for _, arg := range args {
		r := lossRun{arg: arg, name: filepath.Base(filepath.Clean(arg)), dir: arg}
		if i := strings.IndexByte(arg, '='); i > 0 {
			r.name, r.dir = arg[:i], arg[i+1:]
		}
		for _, prev := range runs {
			if sameDir(prev.dir, r.dir) {
				return nil, usageErr("plot loss: --run %s and --run %s are one run directory: give each run once", prev.arg, arg)
			}
			if prev.name == r.name {
				return nil, usageErr("plot loss: --run %s and --run %s both name a line %q: give each run its own name with NAME=DIR", prev.arg, arg, r.name)
			}
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// sameDir reports whether a and b are one directory: the same path once cleaned and made absolute,
// or one file by os.SameFile (a link, a bind mount).
func sameDir(a, b string) bool {
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	if errA == nil && errB == nil && absA == absB {
		return true
	}
	stA, errA := os.Stat(a)
	stB, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(stA, stB)
}
