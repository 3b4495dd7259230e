package main

// The CLI's side of the output guard (internal/outpath) and of the one
// validation path for numeric flags: every command that writes a file checks
// each output with checkOutputs before it computes anything, and every
// numeric flag goes through checkInts / checkFloats (range, NaN/Inf, upper
// bounds), as --threads goes through checkThreads.

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/imagedata"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
	"holdgo/internal/parallel"
)

// forceFlag lets a command replace an existing file of another kind.
func forceFlag() cli.Flag {
	return &cli.BoolFlag{Name: "force", Usage: "replace an existing output file even if it holds another kind of file (never an input, nor a run's own files)"}
}

// output is one file a command is about to write.
type output struct {
	flag, path string
	kind       outpath.Kind
}

// guardData records the data sets a command reads with the guard. An image folder (images:DIR, or a
// plain folder path) is a whole tree no output may enter, since a new image there joins the data set
// (outpath.InputTree); the files of an IDX or CIFAR-10 directory are inputs one by one (a new file
// beside them changes nothing); a trained run or export, an archive or a file is a plain input.
func guardData(g *outpath.Guard, specs ...string) {
	for _, s := range specs {
		path := imagedata.SpecPath(s)
		st, err := os.Stat(path)
		switch {
		case s == "":
		case err != nil || !st.IsDir():
			g.Input(path)
		case strings.HasPrefix(s, "images:") || !imagedata.IsSpec(s) && !outpath.IsRunDir(path) && !isExportDir(path):
			g.InputTree(path)
		default:
			g.Input(path)
			if entries, err := os.ReadDir(path); err == nil && imagedata.IsSpec(s) {
				for _, e := range entries {
					g.Input(filepath.Join(path, e.Name()))
				}
			}
		}
	}
}

// isExportDir reports whether dir holds a checkpoint (a run's or an export's).
func isExportDir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, "ckpt.safetensors"))
	return err == nil
}

// checkOutputs refuses (exit 2) any output the guard refuses, and two outputs that are one file
// (outpath.Guard.CheckAll), before anything is computed or written. The guard knows the command's inputs.
func checkOutputs(g *outpath.Guard, outs ...output) error {
	all := make([]outpath.Output, len(outs))
	for i, o := range outs {
		all[i] = outpath.Output{Flag: o.flag, Path: o.path, Kind: o.kind}
	}
	if err := g.CheckAll(all...); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// intRange is a bound on an integer flag: lo ≤ value ≤ hi.
type intRange struct {
	name   string
	lo, hi int
	note   string // what 0 (or another value) means, for the message
}

// checkInts checks each integer flag against its range (the checkThreads
// pattern for every numeric flag).
func checkInts(c *cli.Context, ranges ...intRange) error {
	for _, r := range ranges {
		if v := c.Int(r.name); v < r.lo || v > r.hi {
			note := ""
			if r.note != "" {
				note = " (" + r.note + ")"
			}
			return usageErr("--%s must be in [%d, %d]%s, got %d", r.name, r.lo, r.hi, note, v)
		}
	}
	return nil
}

// floatRange is a bound on a float flag: finite and lo ≤ value ≤ hi
// (openLo: lo < value).
type floatRange struct {
	name   string
	lo, hi float64
	openLo bool
}

// checkFloats checks float flags: NaN and ±Inf are refused, and the range.
func checkFloats(c *cli.Context, ranges ...floatRange) error {
	for _, r := range ranges {
		v := c.Float64(r.name)
		bad := math.IsNaN(v) || math.IsInf(v, 0) || v < r.lo || v > r.hi || (r.openLo && v == r.lo)
		if bad {
			open := "["
			if r.openLo {
				open = "("
			}
			return usageErr("--%s must be finite and in %s%g, %g], got %v", r.name, open, r.lo, r.hi, v)
		}
	}
	return nil
}

// checkBudget refuses a size flag whose allocation (count values of size
// bytes) would exceed the memory budget.
func checkBudget(flag string, count, size int64) error {
	if err := budget.CheckCount(count, size, "--"+flag); err != nil {
		return usageErr("%v", err)
	}
	return nil
}

// inputErr turns a loader's error into exit status 2 when it is about the
// input (over the budget, not a regular file); other errors pass.
func inputErr(err error) error {
	if errors.Is(err, budget.ErrExceeded) || errors.Is(err, budget.ErrNotRegular) {
		return usageErr("%v", err)
	}
	return err
}

// maxSamples bounds --n of the samplers: far beyond any study, far below
// what a file can hold.
const maxSamples = 1 << 40

// setThreads applies --threads (0: all cores) after checking its range.
func setThreads(c *cli.Context) error {
	if err := checkThreads(c); err != nil {
		return err
	}
	parallel.SetThreads(c.Int("threads"))
	return nil
}

// checkThreads is the usage error for a --threads outside [0, maxThreads].
func checkThreads(c *cli.Context) error {
	if n := c.Int("threads"); n < 0 || n > maxThreads {
		return usageErr("--threads must be in [0, %d] (0: all cores), got %d", maxThreads, n)
	}
	return nil
}
