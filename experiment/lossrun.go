package experiment

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"holdgo/internal/outpath"
	"holdgo/plot"
	"holdgo/train"
)

// RunLoss is holdctl plot loss: it checks out (a figure), reads the runs' logs (runs as DIR or
// NAME=DIR), writes the training loss against step, smoothed over smooth rows (LossFigure), and says so
// on w. Errors of the settings and inputs are InputErrors.
func RunLoss(out string, runArgs []string, smooth int, title string, w io.Writer) error {
	if err := outpath.CheckFigure(false, "out", out); err != nil {
		return &InputError{err}
	}
	runs, err := lossRuns(runArgs)
	if err != nil {
		return err
	}
	var series []plot.Series
	for _, r := range runs {
		s, err := LossSeries(r.name, filepath.Join(r.dir, train.LogFile), smooth)
		if err != nil {
			return inputErr("plot loss --run %s: %v", r.arg, err)
		}
		series = append(series, s)
	}
	if err := LossFigure(out, series, smooth, title); err != nil {
		if errors.Is(err, plot.ErrBadValue) {
			return inputErr("plot loss: %v", err)
		}
		return err
	}
	fmt.Fprintf(w, "wrote %s: %d runs\n", out, len(series))
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
				return nil, inputErr("plot loss: --run %s and --run %s are one run directory: give each run once", prev.arg, arg)
			}
			if prev.name == r.name {
				return nil, inputErr("plot loss: --run %s and --run %s both name a line %q: give each run its own name with NAME=DIR", prev.arg, arg, r.name)
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
