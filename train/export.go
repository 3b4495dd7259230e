package train

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"holdgo/checkpoint"
	"holdgo/imagedata"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
	"holdgo/internal/runlock"
)

// KeyExported marks a checkpoint written by ExportEMA (value "ema").
const KeyExported = "exported"

// ExportEMA writes the shipped form of a trained run to out: the EMA weights only (the tensors named
// "ema.…", float32 safetensors), the run configuration and the step, with the image shape recorded for
// image runs (RunConfig.ImageShape) so that the model samples without its data set. The result loads
// like any checkpoint for sampling (holdctl sample, fid, nll, plot) but cannot be trained or resumed.
// The write is atomic.
func ExportEMA(src *checkpoint.File, out string) (RunConfig, error) {
	cfg, err := ConfigFromCheckpoint(src)
	if err != nil {
		return cfg, err
	}
	if src.Meta[KeyExported] == "" {
		if imagedata.IsSpec(cfg.Data) && len(cfg.ImageShape) == 0 {
			built, err := cfg.Build()
			if err != nil {
				return cfg, fmt.Errorf("export %s: the image shape is read from the run's data set: %w", src.Path, err)
			}
			ds, ok := built.Source.(*imagedata.Dataset)
			if !ok {
				return cfg, fmt.Errorf("export %s: image run without an image data set", src.Path)
			}
			cfg.ImageShape = []int{ds.C, ds.H, ds.W}
		}
	}
	built, err := cfg.Build() // the network whose EMA weights are exported: every name and shape checked
	if err != nil {
		return cfg, fmt.Errorf("export %s: %w", src.Path, err)
	}
	params := built.Net.Parameters()
	if err := LoadWeights(src, params, true); err != nil {
		return cfg, fmt.Errorf("export %s: %w", src.Path, err)
	}
	specs := params.Specs()
	ts := make([]checkpoint.Tensor, 0, len(specs))
	for i, s := range specs {
		w := params.Slice(params.Data, i)
		for _, v := range w {
			if v != v || v > 3.4e38 || v < -3.4e38 {
				return cfg, fmt.Errorf("export %s: EMA weight %s holds NaN or Inf: the run is broken, export an earlier checkpoint", src.Path, s.Name)
			}
		}
		ts = append(ts, checkpoint.Tensor{Name: prefixEMA + s.Name, Shape: s.Shape, Data: w})
	}
	meta, err := cfg.Meta()
	if err != nil {
		return cfg, err
	}
	step, err := src.Step()
	if err != nil {
		return cfg, err
	}
	checkpoint.SetStep(meta, step)
	meta[KeyExported] = "ema"
	if !strings.HasSuffix(out, ".safetensors") {
		return cfg, fmt.Errorf("export: output %s must end in .safetensors", out)
	}
	return cfg, checkpoint.Save(out, ts, meta)
}

// Export writes the shipped form of the run in src into the directory out: ExportEMA's checkpoint
// and config.yaml, built in a temporary directory beside out and put in its place at once
// (atomicfile.WriteDir), so that a reader, or an interruption, sees the old export or the new one,
// never a checkpoint beside another model's configuration. With force it replaces an earlier export
// there; any other content of out, or a target that is the checkpoint being exported, is an
// ExitError of status 2.
func Export(src *checkpoint.File, out string, force bool) error {
	// The export's directory is made (by the rename below), its parent is not: like every other output
	// of holdctl (sample --out, fid --save-stats, …), a missing parent is refused, so a refused or
	// failed export leaves no directories behind.
	parent := filepath.Dir(filepath.Clean(out))
	if st, err := os.Stat(parent); err != nil {
		return inputErr("export: --out %s: its directory %s does not exist (create it first)", out, parent)
	} else if !st.IsDir() {
		return inputErr("export: --out %s: %s is not a directory", out, parent)
	}
	if err := checkExportDir(out, force); err != nil {
		return err
	}
	target := filepath.Join(out, CheckpointFile)
	if abs1, abs2 := absPath(target), absPath(src.Path); abs1 == abs2 {
		return inputErr("export: --out %s would overwrite the checkpoint being exported", out)
	}
	err := atomicfile.WriteDir(out, func(dir string) error {
		cfg, err := ExportEMA(src, filepath.Join(dir, CheckpointFile))
		if err != nil {
			return inputErr("%v", err)
		}
		yml, err := cfg.YAML()
		if err != nil {
			return inputErr("%v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, ConfigFile), yml, 0o644); err != nil {
			return inputErr("export: %v", err)
		}
		return nil
	})
	var ee *ExitError
	if err != nil && !errors.As(err, &ee) {
		return inputErr("export: --out %s: %v", out, err)
	}
	return err
}

// absPath is p absolute, its links resolved where they exist.
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
		return inputErr("export: --out %s: %v", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		if e.Name() != CheckpointFile && e.Name() != ConfigFile {
			return inputErr("export: --out %s holds %s: not an exported model; choose a new directory", dir, e.Name())
		}
	}
	f, err := checkpoint.Load(filepath.Join(dir, CheckpointFile))
	if err != nil || f.Meta[KeyExported] == "" {
		return inputErr("export: --out %s holds a checkpoint that is not an export (a run's?); choose a new directory", dir)
	}
	if !force {
		return inputErr("export: --out %s holds an exported model; add --force to replace it", dir)
	}
	return nil
}

// RunExport is holdctl export: it refuses an empty out, or one inside a run directory that another
// process is training in (its lock), loads the checkpoint that ckpt names (a run directory or a file),
// writes its export to out (Export; force replaces an earlier export) and reports it on w. Its input
// errors are ExitErrors of status 2.
func RunExport(ckpt, out string, force bool, w io.Writer) error {
	if out == "" {
		return inputErr("export: --out is empty: give the directory to write the model into")
	}
	// The export's directory may not be made inside a run that another process is training in.
	if parent := filepath.Dir(filepath.Clean(out)); outpath.IsRunDir(parent) {
		if owner, busy := runlock.Holder(parent); busy {
			return inputErr("export: --out %s is in the run directory %s, which %s is writing now (its lock); wait for it or write elsewhere", out, parent, owner)
		}
	}
	src, err := checkpoint.Load(CheckpointPath(ckpt))
	if err != nil {
		return inputErr("export: %v", err)
	}
	if err := Export(src, out, force); err != nil {
		return err
	}
	st, _ := os.Stat(filepath.Join(out, CheckpointFile))
	step, _ := src.Step()
	fmt.Fprintf(w, "exported %s (step %d, EMA weights, %.1f MB) to %s\n", src.Path, step, float64(st.Size())/1e6, out)
	return nil
}
