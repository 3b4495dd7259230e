package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/plot"
)

func plotLossCommand() *cli.Command {
	return &cli.Command{
		Name:  "loss",
		Usage: "training loss against step (log step axis), one line per run (the runs' log.csv), smoothed",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "run", Required: true, Usage: "run directory (repeat for several; NAME=DIR names the line)"},
			&cli.IntFlag{Name: "smooth", Value: 10, Usage: "moving average over this many logged rows (1: none)"},
			&cli.StringFlag{Name: "title", Usage: "plot title"},
			&cli.StringFlag{Name: "out", Value: "loss.png", Usage: "output .png"},
		},
		Action: runPlotLoss,
	}
}

func runPlotLoss(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOut("out", out); err != nil {
		return err
	}
	smooth := c.Int("smooth")
	if smooth < 1 || smooth > 10000 {
		return usageErr("plot loss: --smooth %d, want 1…10000", smooth)
	}
	var series []plot.Series
	for _, arg := range c.StringSlice("run") {
		name, dir := filepath.Base(filepath.Clean(arg)), arg
		if i := strings.IndexByte(arg, '='); i > 0 {
			name, dir = arg[:i], arg[i+1:]
		}
		steps, loss, err := readLossLog(filepath.Join(dir, logName))
		if err != nil {
			return usageErr("plot loss --run %s: %v", arg, err)
		}
		s := plot.Series{Name: name}
		var sum float64
		for i := range loss {
			sum += loss[i]
			if i >= smooth {
				sum -= loss[i-smooth]
			}
			s.X = append(s.X, steps[i])
			s.Y = append(s.Y, sum/float64(min(i+1, smooth)))
		}
		series = append(series, s)
	}
	title := c.String("title")
	if title == "" {
		title = fmt.Sprintf("training loss (moving average over %d logged steps)", smooth)
	}
	if err := plot.LogLog(out, series, plot.LogLogOptions{Title: title, XLabel: "step", YLabel: "loss", NoMarkers: true, LinearY: true}); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s: %d runs\n", out, len(series))
	return nil
}

// readLossLog reads the step and loss columns of a run's log.csv (rows with a non-finite loss skipped).
func readLossLog(path string) ([]float64, []float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	cr := csv.NewReader(io.LimitReader(f, 1<<30))
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: no header: %v", path, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	si, ok1 := col["step"]
	li, ok2 := col["loss"]
	if !ok1 || !ok2 {
		return nil, nil, fmt.Errorf("%s: no step and loss columns in %v", path, header)
	}
	var steps, loss []float64
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", path, err)
		}
		if len(rec) <= max(si, li) {
			continue
		}
		s, err1 := strconv.ParseFloat(rec[si], 64)
		l, err2 := strconv.ParseFloat(rec[li], 64)
		if err1 != nil || err2 != nil || math.IsNaN(l) || math.IsInf(l, 0) {
			continue
		}
		steps, loss = append(steps, s), append(loss, l)
	}
	if len(steps) == 0 {
		return nil, nil, fmt.Errorf("%s: no logged steps", path)
	}
	return steps, loss, nil
}
