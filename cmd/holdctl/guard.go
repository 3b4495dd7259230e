package main

// The CLI's side of the output guard (internal/outpath): every command that writes a file checks each
// output with checkOutputs before it computes anything. (Numeric flags are checked where they are
// declared: tags on a config struct, internal/clibind.)

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/imagedata"
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
