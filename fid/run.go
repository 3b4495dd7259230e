package fid

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"holdgo/imagedata"
)

// Config is one holdctl fid comparison: the two sides, the feature network and what to report.
type Config struct {
	// Ref and Samples each name a data set (KIND:PATH), a folder of images, a .npy of images, a
	// trained run (Sample draws its images) or a statistics file (.npz).
	Ref, Samples string
	// Features is the feature network; when it is nil and a side is images, Run opens FeatureSpec
	// (OpenExtractor: inception:WEIGHTS or a classifier checkpoint).
	Features    Extractor
	FeatureSpec string
	RefN        int    // use at most this many reference images (0: all)
	N           int    // use at most this many images of Samples
	Batch       int    // images per feature-network batch
	ImageShape  string // C,H,W of .npy images ("": NPYImageShape's default); other images must have it
	SaveStats   string // write the reference statistics to this .npz ("": none)
	KIDOnly     bool   // KID only: no FD
	KID         KIDOptions
	Log         io.Writer // progress and notes
	// RunFile is the checkpoint file of a run directory: a directory without one is a folder of images.
	RunFile string
	// Sample draws the images of the trained run spec (side "ref" or "samples") and says how (nil
	// where nothing was sampled).
	Sample func(side, spec string) (ImageSource, *SamplingReport, error)
}

// Run opens the feature network unless both sides are statistics, reads both sides (statistics, or
// images whose features it computes), writes the reference
// statistics if asked, and reports FD (unless KIDOnly) and, when both sides are images, KID. Errors of
// the input are *InputError; an error of Sample that is not comes back wrapped in one that names the
// side (errors.As still finds it).
func Run(cfg Config) (Report, error) {
	if cfg.ImageShape != "" { // honoured by every side of images (ParseImageShape, CheckImageShape), never ignored
		if _, err := ParseImageShape(cfg.ImageShape); err != nil {
			return Report{}, &InputError{Msg: "fid: " + err.Error()}
		}
		if IsNPZ(cfg.Ref) && IsNPZ(cfg.Samples) {
			return Report{}, &InputError{Msg: fmt.Sprintf("fid: --image-shape %s: --ref and --samples are both statistics files, which hold no images; drop --image-shape", cfg.ImageShape)}
		}
	}
	if cfg.Features == nil && !(IsNPZ(cfg.Ref) && IsNPZ(cfg.Samples)) {
		if cfg.FeatureSpec == "" {
			return Report{}, &InputError{Msg: fmt.Sprintf("fid needs --features inception:WEIGHTS (%s) or a classifier checkpoint from 'holdctl classifier train'", InceptionHelp)}
		}
		ext, err := OpenExtractor(cfg.FeatureSpec)
		if err != nil {
			return Report{}, &InputError{Msg: "fid: " + err.Error()}
		}
		fmt.Fprintf(cfg.Log, "features: %s\n", ext.Name())
		cfg.Features = ext
	}
	a, err := cfg.side("ref", cfg.Ref, cfg.RefN)
	if err != nil {
		return Report{}, err
	}
	b, err := cfg.side("samples", cfg.Samples, cfg.N)
	if err != nil {
		return Report{}, err
	}
	ext := cfg.Features
	rep := Report{N: b.N, RefN: a.N, Sampling: b.Sampled}
	if ext != nil {
		rep.Features, rep.Dim = ext.Name(), ext.Dim()
	} else {
		rep.Features, rep.Dim = "statistics files", a.Stats.Dim
	}
	if path := cfg.SaveStats; path != "" {
		if a.Feats == nil {
			return rep, &InputError{Msg: "fid: --save-stats needs images as --ref (it is already statistics)"}
		}
		st, err := ComputeStats(a.Feats, ext.Dim())
		if err != nil {
			return rep, &InputError{Msg: "fid: " + err.Error()}
		}
		if err := SaveStats(path, st); err != nil {
			return rep, err
		}
		fmt.Fprintf(cfg.Log, "wrote reference statistics %s (mu %d, sigma %d×%d)\n", path, st.Dim, st.Dim, st.Dim)
	}
	if !cfg.KIDOnly {
		v, err := Between(a, b, rep.Dim)
		if err != nil {
			return rep, err
		}
		rep.FID = &v
	}
	if a.Feats != nil && b.Feats != nil {
		k, se, err := KID(a.Feats, b.Feats, rep.Dim, cfg.KID)
		if err != nil {
			return rep, &InputError{Msg: "fid: " + err.Error()}
		}
		rep.KID, rep.KIDSE = &k, &se
	} else if cfg.KIDOnly {
		return rep, &InputError{Msg: "fid: --kid-only needs images on both sides (KID cannot be computed from statistics files)"}
	}
	return rep, nil
}

// side reads one side: statistics, or at most limit (0: all) images whose features it computes.
func (cfg Config) side(flag, spec string, limit int) (Side, error) {
	ext := cfg.Features
	if IsNPZ(spec) {
		st, err := LoadStats(spec)
		if err != nil {
			return Side{}, &InputError{Msg: fmt.Sprintf("fid --%s: %v", flag, err), Err: err}
		}
		if ext != nil && st.Dim != ext.Dim() {
			return Side{}, &InputError{Msg: fmt.Sprintf("fid --%s %s: statistics of dimension %d, but the features are %d-d", flag, spec, st.Dim, ext.Dim())}
		}
		return Side{Stats: st}, nil
	}
	src, sampled, err := cfg.images(flag, spec)
	if err != nil {
		var ie *InputError
		if errors.As(err, &ie) {
			return Side{}, err
		}
		return Side{}, &InputError{Msg: fmt.Sprintf("fid --%s %s: %v", flag, spec, err), Err: err}
	}
	if err := CheckImageShape(cfg.ImageShape, "the images", src.C, src.H, src.W); err != nil {
		return Side{}, &InputError{Msg: fmt.Sprintf("fid --%s %s: %v", flag, spec, err)}
	}
	if err := ext.Check(src.C, src.H, src.W); err != nil {
		return Side{}, &InputError{Msg: fmt.Sprintf("fid --%s %s: %v", flag, spec, err)}
	}
	if limit > 0 {
		src.N = min(src.N, limit)
	}
	feats, err := ExtractReporting(ext, src, cfg.Batch, cfg.Log, flag)
	if err != nil {
		return Side{}, err
	}
	return Side{Feats: feats, N: src.N, Sampled: sampled}, nil
}

// images opens a data set, a .npy of images, a folder of images or a trained run (cfg.Sample).
func (cfg Config) images(flag, spec string) (ImageSource, *SamplingReport, error) {
	if imagedata.IsSpec(spec) {
		d, err := imagedata.Open(spec, imagedata.Options{})
		if err != nil {
			return ImageSource{}, nil, err
		}
		return DatasetSource(d), nil, nil
	}
	if strings.EqualFold(filepath.Ext(spec), ".npy") {
		src, err := OpenNPYImages(flag, spec, cfg.ImageShape, cfg.Features)
		return src, nil, err
	}
	st, err := os.Stat(spec)
	if err != nil {
		return ImageSource{}, nil, err
	}
	if st.IsDir() {
		if _, err := os.Stat(filepath.Join(spec, cfg.RunFile)); err != nil { // a folder of images, not a run
			d, err := imagedata.ReadImages(spec, "")
			if err != nil {
				return ImageSource{}, nil, err
			}
			return DatasetSource(d), nil, nil
		}
	}
	return cfg.Sample(flag, spec)
}
