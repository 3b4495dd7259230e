package main

import (
	"errors"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/outpath"
	"holdgo/sample"
	"holdgo/train"
)

// fidCommand computes FID and KID between two image sets:
//
//	holdctl fid --features fmnist-classifier.safetensors --ref fashion-mnist:DIR --samples run/ --nfe 150 --json
func fidCommand() *cli.Command {
	return &cli.Command{
		Name:  "fid",
		Usage: "Fréchet distance (FID) and kernel distance (KID) between reference images and samples",
		Description: "Each of --ref and --samples is a data set (KIND:PATH as in 'holdctl train'), a folder of PNG/JPEG\n" +
			"files, a .npy of images (n, C·H·W) in [−1, 1], a trained run (directory or checkpoint: --n samples are\n" +
			"drawn with --sampler/--nfe), or a statistics file (.npz with mu and sigma, as pytorch-fid's). Images are\n" +
			"quantised to 8 bits, then --features maps them to feature vectors: 'inception:WEIGHTS' (pytorch-fid's\n" +
			"Inception-v3; " + fid.InceptionHelp + ") or a classifier checkpoint from 'holdctl classifier train'.\n" +
			"FD needs more images than the feature dimension; KID (clean-fid: unbiased MMD², cubic kernel, 100 subsets\n" +
			"of ≤ 1000) needs 2, and is null when either side is a statistics file.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "ref", Usage: "reference images or statistics (.npz)"},
			&cli.StringFlag{Name: "samples", Usage: "images to score, a trained run, or statistics (.npz)"},
			&cli.StringFlag{Name: "features", Usage: "inception:WEIGHTS.pth|.safetensors, or a classifier checkpoint"},
			&cli.IntFlag{Name: "n", Value: 10000, Usage: "samples to draw from a trained run; also caps the images taken from --samples"},
			&cli.IntFlag{Name: "ref-n", Usage: "use at most this many reference images (0: all)"},
			&cli.StringFlag{Name: "image-shape", Usage: "C,H,W of .npy images (default: the classifier's input, or square with 1 or 3 channels); the other images of --ref and --samples must have it"},
			&cli.StringFlag{Name: "save-stats", Usage: "write the reference statistics (mu, sigma) to this .npz"},
			&cli.BoolFlag{Name: "kid-only", Usage: "report KID only (FD needs more images than feature dimensions)"},
			&cli.IntFlag{Name: "batch", Value: 50, Usage: "images per feature-network batch"},
			&cli.IntFlag{Name: "kid-subsets", Value: fid.DefaultKID.Subsets, Usage: "KID subsets"},
			&cli.IntFlag{Name: "kid-subset-size", Value: fid.DefaultKID.SubsetSize, Usage: "KID subset size"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the sampler and of the KID subsets"},
			&cli.BoolFlag{Name: "raw-weights", Usage: "sample a run with its raw weights instead of the EMA"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object: fid, kid, kid_se, n"},
			forceFlag(),
			deviceFlag(),
		}, samplerFlags()...),
		Before: oneProcess("fid"),
		Action: runFID,
	}
}

func runFID(c *cli.Context) error {
	ref, samples, feat := c.String("ref"), c.String("samples"), c.String("features")
	if ref == "" || samples == "" {
		return usageErr("fid needs --ref and --samples (data sets, image folders, .npy images, a trained run or .npz statistics)")
	}
	if err := checkSamplerSizes(c); err != nil {
		return err
	}
	if c.Int("n") < 1 || c.Int("ref-n") < 0 || c.Int("batch") < 1 || c.Int("kid-subsets") < 1 || c.Int("kid-subset-size") < 2 {
		return usageErr("fid: --n, --batch and --kid-subsets must be ≥ 1, --kid-subset-size ≥ 2, --ref-n ≥ 0")
	}
	if err := checkInts(c, intRange{name: "n", lo: 1, hi: 1 << 30}, intRange{name: "ref-n", lo: 0, hi: 1 << 30, note: "0: all"},
		intRange{name: "batch", lo: 1, hi: 4096}, intRange{name: "kid-subsets", lo: 1, hi: 1 << 20},
		intRange{name: "kid-subset-size", lo: 2, hi: 1 << 20}); err != nil {
		return err
	}
	if err := setThreads(c); err != nil {
		return err
	}
	if path := c.String("save-stats"); path != "" {
		guard := outpath.New(c.Bool("force"))
		guardData(guard, ref, samples)
		guard.Input(strings.TrimPrefix(feat, "inception:"))
		if err := checkOutputs(guard, output{"save-stats", path, outpath.NPZ}); err != nil {
			return err
		}
	}
	rep, err := fid.Run(fid.Config{Ref: ref, Samples: samples, FeatureSpec: feat, RefN: c.Int("ref-n"), N: c.Int("n"),
		Batch: c.Int("batch"), ImageShape: c.String("image-shape"), SaveStats: c.String("save-stats"), KIDOnly: c.Bool("kid-only"),
		KID: fid.KIDOptions{Subsets: c.Int("kid-subsets"), SubsetSize: c.Int("kid-subset-size"), Seed: c.Uint64("seed")},
		Log: c.App.ErrWriter, RunFile: train.CheckpointFile, Sample: fidSampling(c).Sample})
	var ec cli.ExitCoder // an error of samplerOn
	var ie *fid.InputError
	switch {
	case errors.As(err, &ec):
		return ec
	case errors.As(err, &ie):
		return usageErr("%v", ie)
	case err != nil:
		return err
	}
	return rep.Write(c.App.Writer, c.Bool("json"))
}

// fidSampling draws --n samples of a trained image run with the sampler flags on --device.
func fidSampling(c *cli.Context) experiment.FIDSampling {
	return experiment.FIDSampling{Spec: samplerSpecFrom(c), N: c.Int("n"), Seed: c.Uint64("seed"), Raw: c.Bool("raw-weights"),
		Device: c.String("device"), Log: c.App.ErrWriter, Prepare: func(m *train.Model, spec *sample.Spec) error {
			if d, ok := m.Source.(*imagedata.Dataset); ok { // --image-shape against the run's images, before any is drawn
				if err := fid.CheckImageShape(c.String("image-shape"), "the trained run's images", d.C, d.H, d.W); err != nil {
					return usageErr("fid: %v", err)
				}
			}
			imageDefaults(c, m, spec, c.App.ErrWriter, true)
			return forwardMemory(c, m)
		},
		On: func(s *sample.Sampler, m *train.Model) (func(int, uint64) (*sample.Result, error), error) {
			return samplerOn(c.String("device"), s, m, c.App.ErrWriter)
		},
		Diverged: func(diverged, n int) { warnDiverged(c.App.ErrWriter, diverged, n, "FID leaves them out") }}
}
