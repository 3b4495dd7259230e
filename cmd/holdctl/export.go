package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"holdgo/checkpoint"
	"holdgo/internal/outpath"
	"holdgo/internal/runlock"
	"holdgo/train"
)

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:  "export",
		Usage: "write the shipped form of a trained run: EMA weights, configuration and image shape (OUT/ckpt.safetensors, OUT/config.yaml)",
		Description: "The exported model samples, scores (fid, nll) and plots like the run it came from, on a machine\n" +
			"without its data set, at a quarter of the size (no raw weights, no optimizer state); it cannot be\n" +
			"trained or resumed. OUT must be a new or empty directory, or an earlier export (then --force).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "run directory or checkpoint to export"},
			&cli.StringFlag{Name: "out", Required: true, Usage: "directory to write the model into"},
			&cli.BoolFlag{Name: "force", Usage: "replace an earlier export in --out"},
		},
		Action: runExport,
	}
}

func runExport(c *cli.Context) error {
	out := c.String("out")
	if out == "" {
		return usageErr("export: --out is empty: give the directory to write the model into")
	}
	// The export's directory may not be made inside a run that another process is training in.
	if parent := filepath.Dir(filepath.Clean(out)); outpath.IsRunDir(parent) {
		if owner, busy := runlock.Holder(parent); busy {
			return usageErr("export: --out %s is in the run directory %s, which %s is writing now (its lock); wait for it or write elsewhere", out, parent, owner)
		}
	}
	src, err := checkpoint.Load(train.CheckpointPath(c.String("ckpt")))
	if err != nil {
		return usageErr("export: %v", err)
	}
	if err := train.Export(src, out, c.Bool("force")); err != nil {
		return cliError(err)
	}
	target := filepath.Join(out, ckptName)
	st, _ := os.Stat(target)
	step, _ := src.Step()
	fmt.Fprintf(c.App.Writer, "exported %s (step %d, EMA weights, %.1f MB) to %s\n", src.Path, step, float64(st.Size())/1e6, out)
	return nil
}
