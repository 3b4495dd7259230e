package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/parallel"
	"holdgo/sample"
	"holdgo/train"
)

// fidCommand computes FID and KID between two image sets:
//
//	holdctl fid --features fmnist-classifier.safetensors --ref fashion-mnist:DIR --samples run/ --nfe 150 --json
//
// fidOptions are holdctl fid's settings.
type fidOptions struct {
	Ref           string `flag:"ref" help:"reference images or statistics (.npz)"`
	Samples       string `flag:"samples" help:"images to score, a trained run, or statistics (.npz)"`
	Features      string `flag:"features" help:"inception:WEIGHTS.pth|.safetensors, or a classifier checkpoint"`
	N             int    `flag:"n" min:"1" max:"1073741824" help:"samples to draw from a trained run; also caps the images taken from --samples"`
	RefN          int    `flag:"ref-n" min:"0" max:"1073741824" note:"0: all" help:"use at most this many reference images (0: all)"`
	ImageShape    string `flag:"image-shape" help:"C,H,W of .npy images (default: the classifier's input, or square with 1 or 3 channels); the other images of --ref and --samples must have it"`
	SaveStats     string `flag:"save-stats" help:"write the reference statistics (mu, sigma) to this .npz"`
	KIDOnly       bool   `flag:"kid-only" help:"report KID only (FD needs more images than feature dimensions)"`
	Batch         int    `flag:"batch" min:"1" max:"4096" help:"images per feature-network batch"`
	KIDSubsets    int    `flag:"kid-subsets" min:"1" max:"1048576" help:"KID subsets"`
	KIDSubsetSize int    `flag:"kid-subset-size" min:"2" max:"1048576" help:"KID subset size"`
	Seed          uint64 `flag:"seed" help:"seed of the sampler and of the KID subsets"`
	RawWeights    bool   `flag:"raw-weights" help:"sample a run with its raw weights instead of the EMA"`
	parallel.ThreadsOption
	JSON bool `flag:"json" help:"print one JSON object: fid, kid, kid_se, n"`
	sample.SpecFlags
}

func fidCommand() *cli.Command {
	opt := fidOptions{N: 10000, Batch: 50, KIDSubsets: fid.DefaultKID.Subsets, KIDSubsetSize: fid.DefaultKID.SubsetSize, Seed: 1,
		SpecFlags: sample.DefaultSpecFlags()}
	return sampleHelp(withConfig(&cli.Command{
		Name:  "fid",
		Usage: "Fréchet distance (FID) and kernel distance (KID) between reference images and samples",
		Description: "Each of --ref and --samples is a data set (KIND:PATH as in 'holdctl train'), a folder of PNG/JPEG\n" +
			"files, a .npy of images (n, C·H·W) in [−1, 1], a trained run (directory or checkpoint: --n samples are\n" +
			"drawn with --sampler/--nfe), or a statistics file (.npz with mu and sigma, as pytorch-fid's). Images are\n" +
			"quantised to 8 bits, then --features maps them to feature vectors: 'inception:WEIGHTS' (pytorch-fid's\n" +
			"Inception-v3; " + fid.InceptionHelp + ") or a classifier checkpoint from 'holdctl classifier train'.\n" +
			"FD needs more images than the feature dimension; KID (clean-fid: unbiased MMD², cubic kernel, 100 subsets\n" +
			"of ≤ 1000) needs 2, and is null when either side is a statistics file.",
		Flags:  []cli.Flag{forceFlag(), deviceFlag()},
		Before: oneProcess("fid"),
		Action: func(c *cli.Context) error { return runFID(c, opt) },
	}, &opt))
}

func runFID(c *cli.Context, opt fidOptions) error {
	opt.Apply()
	err := experiment.RunFID(fid.Config{Ref: opt.Ref, Samples: opt.Samples, FeatureSpec: opt.Features, RefN: opt.RefN, N: opt.N,
		Batch: opt.Batch, ImageShape: opt.ImageShape, SaveStats: opt.SaveStats, KIDOnly: opt.KIDOnly,
		KID: fid.KIDOptions{Subsets: opt.KIDSubsets, SubsetSize: opt.KIDSubsetSize, Seed: opt.Seed},
		Log: c.App.ErrWriter, RunFile: train.CheckpointFile, Sample: fidSampling(c, opt).Sample}, c.Bool("force"), opt.JSON, c.App.Writer)
	var ec cli.ExitCoder // an error of samplerOn or of fidSampling's Prepare
	var ie *fid.InputError
	switch {
	case errors.As(err, &ec):
		return ec
	case errors.As(err, &ie):
		return usageErr("%v", ie)
	}
	return inputExit(err)
}

// fidSampling draws --n samples of a trained image run with the sampler flags on --device.
func fidSampling(c *cli.Context, opt fidOptions) experiment.FIDSampling {
	return experiment.FIDSampling{Spec: opt.Spec(c.IsSet), N: opt.N, Seed: opt.Seed, Raw: opt.RawWeights,
		Device: c.String("device"), Log: c.App.ErrWriter, Prepare: func(m *train.Model, spec *sample.Spec) error {
			if d, ok := m.Source.(*imagedata.Dataset); ok { // --image-shape against the run's images, before any is drawn
				if err := fid.CheckImageShape(opt.ImageShape, "the trained run's images", d.C, d.H, d.W); err != nil {
					return usageErr("fid: %v", err)
				}
			}
			experiment.ImageDefaults(c.IsSet, m, spec, c.App.ErrWriter, true)
			if err := m.SetForwardMiB(opt.ForwardMiB); err != nil {
				return usageErr("%v", err)
			}
			return nil
		},
		On: func(s *sample.Sampler, m *train.Model) (func(int, uint64) (*sample.Result, error), error) {
			return samplerOn(c.String("device"), s, m, c.App.ErrWriter)
		},
		Diverged: func(diverged, n int) { sample.WarnDiverged(c.App.ErrWriter, diverged, n, "FID leaves them out") }}
}
