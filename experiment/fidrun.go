package experiment

import (
	"io"
	"strings"

	"holdgo/fid"
	"holdgo/internal/outpath"
)

// RunFID is holdctl fid after its flags are read: it checks cfg's Ref and Samples and the statistics'
// file (SaveStats, which the guard, with force, may not let replace the data or the feature weights),
// runs fid.Run and writes its report on w (as JSON with asJSON). The checks' errors are InputErrors,
// fid.Run's come back as it returns them.
func RunFID(cfg fid.Config, force, asJSON bool, w io.Writer) error {
	if cfg.Ref == "" || cfg.Samples == "" {
		return inputErr("fid needs --ref and --samples (data sets, image folders, .npy images, a trained run or .npz statistics)")
	}
	if path := cfg.SaveStats; path != "" {
		guard := outpath.New(force)
		guard.Data(cfg.Ref, cfg.Samples)
		guard.Input(strings.TrimPrefix(cfg.FeatureSpec, "inception:"))
		if err := guard.CheckAll(outpath.Output{Flag: "save-stats", Path: path, Kind: outpath.NPZ}); err != nil {
			return &InputError{err}
		}
	}
	rep, err := fid.Run(cfg)
	if err != nil {
		return err
	}
	return rep.Write(w, asJSON)
}
