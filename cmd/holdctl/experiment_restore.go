package main

// holdctl experiment restore: the restoration study of issue 46 (docs/restoration.md) — models ×
// tasks × σ_y × methods × NFE on the same images, masks, measurements and seeds, with the baselines
// and the paired differences between models: package restore's Study (restore.RunStudy loads the
// models, checks the outputs and runs it). The command writes the tables.

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/internal/atomicfile"
	"holdgo/restore"
	"holdgo/sample"
)

// experimentRestoreOptions are experiment restore's numeric settings.
type experimentRestoreOptions struct {
	restoreNumbers
	PriorN int `flag:"prior-n" min:"0" max:"2147483647" note:"0: all" help:"images of --prior used (0: all)"`
}

func experimentRestoreCommand() *cli.Command {
	opt := experimentRestoreOptions{restoreNumbers: defaultRestoreNumbers(200)}
	return withConfig(&cli.Command{
		Name:  "restore",
		Usage: "restoration study: models × tasks × σ_y × methods × NFE on the same images, with baselines and paired differences",
		Description: "Runs holdctl restore for every cell on images first … first+n−1 of --in: every model sees the same images,\n" +
			"masks, measurements y and method noise (Philox streams keyed by --seed and the image's index), so the\n" +
			"differences between models are paired. Reports per cell PSNR and SSIM (on [0, 1]), with --features the\n" +
			"classifier-feature distance, class agreement and KID against --kid-ref (default: all of --in's data set),\n" +
			"the RMS of A x − y, and with --samples-per-image K > 1 the calibration check PSNR(mean of K) − PSNR\n" +
			"(10·log10(2K/(K+1)) for a calibrated sampler); each ± s.e. over images. --prior DATA adds the baselines\n" +
			"mean fill, the Gaussian posterior mean (LMMSE) and one Gaussian-posterior sample from DATA's mean and\n" +
			"covariance. --pair A:B reports A − B per image (default: the first model against each other one).\n" +
			"A task is NAME or NAME:σ_y (σ_y defaults to --noise); a cell a task cannot take (replace on sr4, ddnm\n" +
			"without noise on deblur) is listed as skipped with the reason.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "model", Usage: "NAME=DIR: a trained image model (repeat; names label the rows)"},
			&cli.StringSliceFlag{Name: "pair", Usage: "A:B: report the paired differences A − B (repeat; default: the first model against each other one)"},
			&cli.StringSliceFlag{Name: "tasks", Value: cli.NewStringSlice(restore.TaskInpaintBox, restore.TaskSR4, restore.TaskDenoise+":0.2"), Usage: "tasks as NAME or NAME:σ_y"},
			&cli.StringSliceFlag{Name: "methods", Value: cli.NewStringSlice(restore.MethodDDNM), Usage: "replace, repaint, ddnm, pigdm, dps or none (denoise's exact start)"},
			&cli.IntSliceFlag{Name: "nfe", Value: cli.NewIntSlice(50), Usage: "forward passes per sample (as restore's --nfe)"},
			&cli.StringFlag{Name: "box-pos", Value: restore.BoxCenter, Usage: "inpaint-box: center or random"},
			&cli.StringFlag{Name: "grid", Value: sample.GridVPMatched, Usage: "σ-grid"},
			&cli.StringFlag{Name: "in", Usage: "images: a data set (fashion-mnist:DIR#test, …) or a .npy of (n, C·H·W) values in [−1, 1]"},
			&cli.StringFlag{Name: "features", Usage: "classifier checkpoint (models/fmnist-classifier.safetensors): feature distance, class agreement and KID"},
			&cli.StringFlag{Name: "kid-ref", Usage: "data set of KID's reference images (default: --in's data set, all of it)"},
			&cli.StringFlag{Name: "prior", Usage: "data set whose mean and covariance give the baselines (fashion-mnist:DIR, the training split)"},
			&cli.StringFlag{Name: "format", Value: "markdown", Usage: "markdown or json"},
			&cli.StringFlag{Name: "out", Usage: "write to this file instead of standard output"},
			&cli.StringFlag{Name: "json-out", Usage: "also write the study as JSON to this file (with --format markdown)"},
			forceFlag(),
		},
		Before: oneProcess("experiment restore"),
		Action: func(c *cli.Context) error { return runExperimentRestore(c, opt) },
	}, &opt)
}

func runExperimentRestore(c *cli.Context, opt experimentRestoreOptions) error {
	opt.Apply()
	if f := c.String("format"); f != "markdown" && f != "json" {
		return usageErr("experiment restore: --format %q, want markdown or json", f)
	}
	study, err := restore.RunStudy(restore.StudyRun{
		Base: restore.Params{Eta: opt.Eta, Resample: opt.Resample, Jump: opt.Jump, DPSScale: opt.DPSScale, PiGDMVar: opt.PiGDMVar,
			Clip: opt.Clip, Grid: c.String("grid"), SigmaMin: opt.SigmaMin,
			Task: restore.Task{Box: opt.Box, BoxPos: c.String("box-pos"), Drop: opt.Drop, BlurSigma: opt.BlurSigma}},
		Study: restore.Study{In: c.String("in"), First: opt.First, N: opt.N, K: opt.K, Seed: opt.Seed, Prior: c.String("prior"),
			Version: version},
		Models: c.StringSlice("model"), Pairs: c.StringSlice("pair"), Tasks: c.StringSlice("tasks"), Methods: c.StringSlice("methods"),
		NFEs: c.IntSlice("nfe"), MaxNFE: experiment.MaxNFE, Features: c.String("features"), KIDRef: c.String("kid-ref"), PriorN: opt.PriorN,
		Noise: opt.Noise, ForwardMiB: opt.ForwardMiB, Out: c.String("out"), JSONOut: c.String("json-out"), Force: c.Bool("force"),
	}, c.App.ErrWriter)
	if err != nil {
		return restoreErr(err)
	}
	if p := c.String("json-out"); p != "" {
		if err := atomicfile.Write(p, study.JSON); err != nil {
			return fmt.Errorf("holdctl experiment restore: write %s: %w", p, err)
		}
	}
	write := study.Markdown
	if c.String("format") == "json" {
		write = study.JSON
	}
	return studyErr(experiment.WriteStudy(c.String("out"), c.App.Writer, write)) // its messages say experiment samplers, as they always have
}
