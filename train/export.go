package train

import (
	"fmt"
	"strings"

	"holdgo/checkpoint"
	"holdgo/imagedata"
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
