package main

// holdctl experiment restore: the restoration study of issue 46 (docs/restoration.md) — models ×
// tasks × σ_y × methods × NFE on the same images, masks, measurements and seeds, with the baselines
// and the paired differences between models: package restore's Study. The command loads the models,
// checks the outputs and writes the tables.

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"holdgo/imagedata"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
	"holdgo/layers"
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
	if c.NArg() > 0 {
		return usageErr("experiment restore takes no arguments, got %q", c.Args().First())
	}
	opt.apply()
	if f := c.String("format"); f != "markdown" && f != "json" {
		return usageErr("experiment restore: --format %q, want markdown or json", f)
	}
	if c.String("in") == "" || len(c.StringSlice("model")) == 0 {
		return usageErr("experiment restore needs --model NAME=DIR (one or more) and --in IMAGES")
	}
	models, err := restore.LoadStudyModels(c.StringSlice("model"), opt.ForwardMiB)
	if err != nil {
		return restoreErr(err)
	}
	pairs, err := restore.StudyPairs(c.StringSlice("pair"), models)
	if err != nil {
		return restoreErr(err)
	}
	tasks, err := restore.StudyTasks(c.StringSlice("tasks"), c.StringSlice("methods"), opt.Noise)
	if err != nil {
		return restoreErr(err)
	}
	for _, n := range c.IntSlice("nfe") {
		if n < 2 || n > maxNFE {
			return usageErr("experiment restore: --nfe %d, want 2 … %d", n, maxNFE)
		}
	}
	guard := outpath.New(c.Bool("force"))
	for _, m := range models {
		guard.Input(m.Dir, m.Model.Config.DataPath())
		guard.Data(m.Model.Config.Data)
	}
	guard.Input(c.String("features"))
	guard.Data(c.String("in"), c.String("kid-ref"), c.String("prior"))
	outs := []output{{"out", c.String("out"), outpath.Text}}
	if p := c.String("json-out"); p != "" {
		if p == c.String("out") {
			return usageErr("experiment restore: --json-out and --out are both %s", p)
		}
		outs = append(outs, output{"json-out", p, outpath.Text})
	}
	if err := checkOutputs(guard, outs...); err != nil {
		return err
	}
	shape := models[0].Model.Source.(*imagedata.Dataset)
	var clf *layers.Classifier
	if p := c.String("features"); p != "" {
		if clf, err = restore.LoadClassifier(p, shape); err != nil {
			return restoreErr(err)
		}
	}
	study := &restore.Study{In: c.String("in"), First: opt.First, N: opt.N, K: opt.K,
		Seed: opt.Seed, Models: models, Prior: c.String("prior"), Version: version}
	var kidRef []float32
	if clf != nil {
		study.KIDRef = c.String("kid-ref")
		if study.KIDRef == "" {
			if !imagedata.IsSpec(study.In) {
				return usageErr("experiment restore: --in %s is not a data set: give --kid-ref DATA for KID's reference images", study.In)
			}
			study.KIDRef = study.In
		}
		if kidRef, err = restore.KIDReference(clf, study.KIDRef, shape, c.App.ErrWriter); err != nil {
			return restoreErr(err)
		}
	}
	var mean, cov []float64
	if study.Prior != "" {
		if mean, cov, err = restore.PriorMoments(opt.PriorN, study.Prior, shape, c.App.ErrWriter); err != nil {
			return restoreErr(err)
		}
	}
	base := restore.Params{RawWeights: false, Eta: opt.Eta, Resample: opt.Resample, Jump: opt.Jump,
		DPSScale: opt.DPSScale, PiGDMVar: opt.PiGDMVar, Clip: opt.Clip, Grid: c.String("grid"),
		SigmaMin: opt.SigmaMin, In: study.In, First: study.First, N: study.N, K: study.K, Seed: study.Seed,
		Task: restore.Task{Box: opt.Box, BoxPos: c.String("box-pos"), Drop: opt.Drop, BlurSigma: opt.BlurSigma}}
	if err := study.Run(restore.StudyConfig{Base: base, Pairs: pairs, Tasks: tasks, Methods: c.StringSlice("methods"),
		NFEs: c.IntSlice("nfe"), Classifier: clf, KIDRef: kidRef, Mean: mean, Cov: cov, Log: c.App.ErrWriter}); err != nil {
		return restoreErr(err)
	}
	asJSON := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", " ")
		return enc.Encode(study)
	}
	if p := c.String("json-out"); p != "" {
		if err := atomicfile.Write(p, asJSON); err != nil {
			return fmt.Errorf("holdctl experiment restore: write %s: %w", p, err)
		}
	}
	if c.String("format") == "json" {
		return writeStudy(c, asJSON)
	}
	return writeStudy(c, study.Markdown)
}
