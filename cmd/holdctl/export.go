package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"holdgo/checkpoint"
	"holdgo/internal/atomicfile"
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
	src, err := checkpoint.Load(train.CheckpointPath(c.String("ckpt")))
	if err != nil {
		return usageErr("export: %v", err)
	}
	if err := checkExportDir(out, c.Bool("force")); err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return usageErr("export: %v", err)
	}
	target := filepath.Join(out, ckptName)
	if abs1, abs2 := absPath(target), absPath(src.Path); abs1 == abs2 {
		return usageErr("export: --out %s would overwrite the checkpoint being exported", out)
	}
	cfg, err := train.ExportEMA(src, target)
	if err != nil {
		return usageErr("%v", err)
	}
	yml, err := cfg.YAML()
	if err != nil {
		return usageErr("%v", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(out, configName), yml); err != nil {
		return usageErr("export: %v", err)
	}
	st, _ := os.Stat(target)
	step, _ := src.Step()
	fmt.Fprintf(c.App.Writer, "exported %s (step %d, EMA weights, %.1f MB) to %s\n", src.Path, step, float64(st.Size())/1e6, out)
	return nil
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		return r
	}
	return a
}

// checkExportDir accepts a missing or empty directory, or with force one that holds an earlier export
// (config.yaml and an exported checkpoint, nothing else).
func checkExportDir(dir string, force bool) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return usageErr("export: --out %s: %v", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if e.Name() != ckptName && e.Name() != configName {
			return usageErr("export: --out %s holds %s: not an exported model; choose a new directory", dir, e.Name())
		}
	}
	f, err := checkpoint.Load(filepath.Join(dir, ckptName))
	if err != nil || f.Meta[train.KeyExported] == "" {
		return usageErr("export: --out %s holds a checkpoint that is not an export (a run's?); choose a new directory", dir)
	}
	if !force {
		return usageErr("export: --out %s holds an exported model; add --force to replace it", dir)
	}
	return nil
}
