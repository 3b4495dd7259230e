package main

// The CLI's side of the output guard (internal/outpath): every command that writes a file checks each
// output with checkOutputs before it computes anything. (Numeric flags are checked where they are
// declared: tags on a config struct, internal/clibind.)

import (
	"errors"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
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

// checkPNGOut validates an output picture path before any work is done (outpath.CheckFigure: through
// the output guard, no input of the command, no run's file, a PNG or, with force, another kind of file
// replaced); its errors exit with status 2.
func checkPNGOut(force bool, flag, path string, inputs ...string) error {
	if err := outpath.CheckFigure(force, flag, path, inputs...); err != nil {
		return usageErr("%v", err)
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

// inputExit is a command's error: one of its settings or inputs (experiment.InputError) exits with
// status 2, another as it is (status 1).
func inputExit(err error) error {
	var ie *experiment.InputError
	if errors.As(err, &ie) {
		return usageErr("%v", ie)
	}
	return err
}
