package main

// holdctl experiment restore: the restoration study of issue 46 (docs/restoration.md) — models ×
// tasks × σ_y × methods × NFE on the same images, masks, measurements and seeds, with the baselines
// of package restore and the paired differences between models.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
	"holdgo/layers"
	"holdgo/restore"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
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

// restoreStudyModel is one --model.
type restoreStudyModel struct {
	Name  string       `json:"name"`
	Dir   string       `json:"dir"`
	SDE   string       `json:"sde"`
	model *train.Model // loaded
}

// restoreStudyTask is one --tasks entry.
type restoreStudyTask struct {
	Name   string  `json:"name"`
	SigmaY float64 `json:"sigma_y"`
}

// restoreStudyCell is one model's (or baseline's) result for one task, method and NFE.
type restoreStudyCell struct {
	Task     string  `json:"task"`
	SigmaY   float64 `json:"sigma_y"`
	Method   string  `json:"method"`
	NFE      int     `json:"nfe,omitempty"`
	Model    string  `json:"model"`
	PSNR     stat    `json:"psnr"`
	SSIM     stat    `json:"ssim"`
	FDist    *stat   `json:"fdist,omitempty"`
	Agree    *stat   `json:"class_agreement,omitempty"`
	KID      *stat   `json:"kid,omitempty"`
	Calib    *stat   `json:"psnr_mean_of_k_gain,omitempty"`
	RMS      float64 `json:"rms_residual"`
	VJP      int     `json:"vjp,omitempty"`
	Wall     float64 `json:"wall_s"`
	Diverged int     `json:"diverged,omitempty"`
	per      restore.PerImage
	skipped  string
	baseline bool
}

// stat is a mean ± s.e. over images.
type stat struct {
	Mean float64 `json:"mean"`
	SE   float64 `json:"se"`
	N    int     `json:"n"`
}

func statOf(v []float64) stat {
	var kept []float64
	for _, x := range v {
		if !math.IsNaN(x) {
			kept = append(kept, x)
		}
	}
	if len(kept) == 0 {
		return stat{Mean: math.NaN(), SE: math.NaN()}
	}
	s := sample.MeanSE(kept)
	return stat{Mean: s.Mean, SE: s.SE, N: len(kept)}
}

// restorePairCell is the paired difference A − B of one task, method and NFE.
type restorePairCell struct {
	Task   string  `json:"task"`
	SigmaY float64 `json:"sigma_y"`
	Method string  `json:"method"`
	NFE    int     `json:"nfe"`
	A      string  `json:"a"`
	B      string  `json:"b"`
	PSNR   stat    `json:"psnr"`
	SSIM   stat    `json:"ssim"`
	FDist  *stat   `json:"fdist,omitempty"`
	Agree  *stat   `json:"class_agreement,omitempty"`
}

// restoreStudy is the whole study, as --format json writes it.
type restoreStudy struct {
	In      string              `json:"in"`
	First   int                 `json:"first"`
	N       int                 `json:"n"`
	K       int                 `json:"samples_per_image"`
	Seed    uint64              `json:"seed"`
	Models  []restoreStudyModel `json:"models"`
	Prior   string              `json:"prior,omitempty"`
	KIDRef  string              `json:"kid_ref,omitempty"`
	Cells   []*restoreStudyCell `json:"cells"`
	Pairs   []restorePairCell   `json:"pairs"`
	Skipped []string            `json:"skipped,omitempty"`
	Version string              `json:"version"`
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
	models, err := restoreStudyModels(c, opt.ForwardMiB)
	if err != nil {
		return err
	}
	pairs, err := restoreStudyPairs(c, models)
	if err != nil {
		return err
	}
	tasks, err := restoreStudyTasks(c, opt.Noise)
	if err != nil {
		return err
	}
	for _, n := range c.IntSlice("nfe") {
		if n < 2 || n > maxNFE {
			return usageErr("experiment restore: --nfe %d, want 2 … %d", n, maxNFE)
		}
	}
	guard := outpath.New(c.Bool("force"))
	for _, m := range models {
		guard.Input(m.Dir, m.model.Config.DataPath())
		guardData(guard, m.model.Config.Data)
	}
	guard.Input(c.String("features"))
	guardData(guard, c.String("in"), c.String("kid-ref"), c.String("prior"))
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
	shape := models[0].model.Source.(*imagedata.Dataset)
	var clf *layers.Classifier
	if p := c.String("features"); p != "" {
		if clf, err = restore.LoadClassifier(p, shape); err != nil {
			return restoreErr(err)
		}
	}
	study := &restoreStudy{In: c.String("in"), First: opt.First, N: opt.N, K: opt.K,
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
		if kidRef, err = restoreKIDReference(c, clf, study.KIDRef, shape); err != nil {
			return err
		}
	}
	var mean, cov []float64
	if study.Prior != "" {
		if mean, cov, err = restorePriorMoments(c, opt.PriorN, study.Prior, shape); err != nil {
			return err
		}
	}
	base := restore.Params{RawWeights: false, Eta: opt.Eta, Resample: opt.Resample, Jump: opt.Jump,
		DPSScale: opt.DPSScale, PiGDMVar: opt.PiGDMVar, Clip: opt.Clip, Grid: c.String("grid"),
		SigmaMin: opt.SigmaMin, In: study.In, First: study.First, N: study.N, K: study.K, Seed: study.Seed}
	warn := c.App.ErrWriter
	for _, task := range tasks {
		tp := base
		tp.Task = restore.Task{Name: task.Name, Box: opt.Box, BoxPos: c.String("box-pos"), Drop: opt.Drop,
			BlurSigma: opt.BlurSigma, Noise: task.SigmaY}
		if mean != nil {
			cells, err := restoreBaselines(tp, models[0].model, mean, cov)
			if err != nil {
				return err
			}
			if cells == nil {
				study.Skipped = append(study.Skipped, fmt.Sprintf("%s σ_y %g: baselines: the task does not apply to the images", task.Name, task.SigmaY))
			}
			study.Cells = append(study.Cells, cells...)
		}
		for _, method := range c.StringSlice("methods") {
			for _, nfe := range c.IntSlice("nfe") {
				p := tp
				p.Method, p.NFE = method, nfe
				row := map[string]*restoreStudyCell{}
				var reasons []string
				for _, m := range models {
					p.Ckpt = m.Dir
					cell, err := restoreStudyRun(p, m, clf, kidRef, warn)
					if err != nil {
						return err
					}
					cell.Task, cell.SigmaY, cell.Method, cell.NFE, cell.Model = task.Name, task.SigmaY, method, nfe, m.Name
					if cell.skipped != "" {
						reasons = append(reasons, fmt.Sprintf("%s: %s", m.Name, cell.skipped))
						continue
					}
					fmt.Fprintf(warn, "experiment restore: %s σ_y %g, %s, NFE %d, %s: PSNR %.2f ± %.2f, SSIM %.3f (%.0fs)\n",
						task.Name, task.SigmaY, method, nfe, m.Name, cell.PSNR.Mean, cell.PSNR.SE, cell.SSIM.Mean, cell.Wall)
					study.Cells = append(study.Cells, cell)
					row[m.Name] = cell
				}
				if len(reasons) > 0 {
					what := fmt.Sprintf("%s σ_y %g, %s, NFE %d", task.Name, task.SigmaY, method, nfe)
					if _, why, _ := strings.Cut(reasons[0], ": "); len(reasons) == len(models) && allSuffix(reasons, why) {
						study.Skipped = append(study.Skipped, what+", every model: "+why)
					} else {
						study.Skipped = append(study.Skipped, what+", "+strings.Join(reasons, "; "))
					}
				}
				for _, pr := range pairs {
					a, b := row[pr[0]], row[pr[1]]
					if a == nil || b == nil {
						continue
					}
					study.Pairs = append(study.Pairs, pairedDifference(a, b))
				}
			}
		}
	}
	if len(study.Cells) == 0 {
		return usageErr("experiment restore: no cell could run: %s", strings.Join(study.Skipped, "; "))
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
	return writeStudy(c, study.markdown)
}

// restoreStudyModels loads every --model NAME=DIR and checks they share one image shape.
func restoreStudyModels(c *cli.Context, forwardMiB int) ([]restoreStudyModel, error) {
	var out []restoreStudyModel
	seen := map[string]bool{}
	for _, arg := range c.StringSlice("model") {
		name, dir, ok := strings.Cut(arg, "=")
		if !ok || name == "" || dir == "" || strings.ContainsAny(name, ":|") {
			return nil, usageErr("experiment restore: --model %q, want NAME=DIR (a name without ':' or '|')", arg)
		}
		if seen[name] {
			return nil, usageErr("experiment restore: --model name %q given twice", name)
		}
		seen[name] = true
		m, err := train.LoadModel(dir, false, "")
		if err != nil {
			return nil, usageErr("--model %s: %v", arg, err)
		}
		shape, ok := m.Source.(*imagedata.Dataset)
		if !ok {
			return nil, usageErr("--model %s is a model of %s, not of images", arg, m.Config.Data)
		}
		if len(out) > 0 {
			s0 := out[0].model.Source.(*imagedata.Dataset)
			if s0.C != shape.C || s0.H != shape.H || s0.W != shape.W {
				return nil, usageErr("--model %s takes %d×%d×%d images, --model %s %d×%d×%d: a study compares models of one image shape",
					arg, shape.C, shape.H, shape.W, out[0].Name, s0.C, s0.H, s0.W)
			}
		}
		if err := forwardMemory(forwardMiB, m); err != nil {
			return nil, err
		}
		out = append(out, restoreStudyModel{Name: name, Dir: dir, SDE: m.Config.SDE, model: m})
	}
	return out, nil
}

// restoreStudyPairs reads --pair A:B (default: the first model against each other one).
func restoreStudyPairs(c *cli.Context, models []restoreStudyModel) ([][2]string, error) {
	known := map[string]bool{}
	for _, m := range models {
		known[m.Name] = true
	}
	var pairs [][2]string
	for _, arg := range c.StringSlice("pair") {
		a, b, ok := strings.Cut(arg, ":")
		if !ok || !known[a] || !known[b] || a == b {
			return nil, usageErr("experiment restore: --pair %q, want A:B with two different --model names", arg)
		}
		pairs = append(pairs, [2]string{a, b})
	}
	if len(pairs) == 0 {
		for _, m := range models[1:] {
			pairs = append(pairs, [2]string{models[0].Name, m.Name})
		}
	}
	return pairs, nil
}

// The tasks and methods a study takes (inpaint-mask needs a drawn mask: holdctl serve).
var (
	studyTasks   = []string{restore.TaskInpaintBox, restore.TaskInpaintRandom, restore.TaskSR2, restore.TaskSR4, restore.TaskDeblur, restore.TaskDenoise}
	studyMethods = []string{restore.MethodReplace, restore.MethodRepaint, restore.MethodDDNM, restore.MethodPiGDM, restore.MethodDPS, restore.MethodNone}
)

// restoreStudyTasks reads --tasks NAME[:σ_y] and checks --methods.
func restoreStudyTasks(c *cli.Context, noise float64) ([]restoreStudyTask, error) {
	for _, m := range c.StringSlice("methods") {
		if !slices.Contains(studyMethods, m) {
			return nil, usageErr("experiment restore: --methods %q, want some of %s", m, strings.Join(studyMethods, ", "))
		}
	}
	var out []restoreStudyTask
	for _, arg := range c.StringSlice("tasks") {
		name, sy, has := strings.Cut(arg, ":")
		if !slices.Contains(studyTasks, name) {
			return nil, usageErr("experiment restore: --tasks %q: unknown task %q, want one of %s (optionally :σ_y)", arg, name, strings.Join(studyTasks, ", "))
		}
		t := restoreStudyTask{Name: name, SigmaY: noise}
		if has {
			v, err := strconv.ParseFloat(sy, 64)
			if err != nil || !(v >= 0 && v <= 100) {
				return nil, usageErr("experiment restore: --tasks %q: σ_y %q, want a number in [0, 100]", arg, sy)
			}
			t.SigmaY = v
		}
		out = append(out, t)
	}
	return out, nil
}

// allSuffix reports whether every reason ends in why (the same reason for every model).
func allSuffix(reasons []string, why string) bool {
	for _, r := range reasons {
		if !strings.HasSuffix(r, ": "+why) {
			return false
		}
	}
	return true
}

// restoreStudyRun restores the images of p with model m and measures them; a cell the task, method
// or model cannot take comes back with skipped set.
func restoreStudyRun(p restore.Params, m restoreStudyModel, clf *layers.Classifier, kidRef []float32, warn io.Writer) (*restoreStudyCell, error) {
	if p.Method == restore.MethodNone {
		p.Method = ""
		if p.Task.Name != restore.TaskDenoise {
			return &restoreStudyCell{skipped: "none is denoise's exact start"}, nil
		}
	}
	run, err := restore.Prepare(p, m.model)
	var ie *restore.InputError
	switch {
	case errors.As(err, &ie):
		return &restoreStudyCell{skipped: ie.Error()}, nil
	case err != nil:
		return nil, err
	}
	if err := run.LoadImages(); err != nil {
		return nil, restoreErr(err)
	}
	start := time.Now()
	out, st, err := run.Restore()
	if err != nil {
		return nil, err
	}
	rep, err := run.Measure(warn, out, st, clf)
	if err != nil {
		return nil, restoreErr(err)
	}
	cell := &restoreStudyCell{PSNR: statOf(rep.PerImage.PSNR), SSIM: statOf(rep.PerImage.SSIM), RMS: rep.RMSResidual,
		VJP: rep.VJP, Wall: time.Since(start).Seconds(), Diverged: rep.NonFinite, per: rep.PerImage}
	if clf != nil {
		fd, ag := statOf(rep.PerImage.FDist), statOf(rep.PerImage.Agree)
		cell.FDist, cell.Agree = &fd, &ag
		k, err := restoreKID(clf, out, run, kidRef)
		if err != nil {
			return nil, err
		}
		cell.KID = k
	}
	if run.K > 1 {
		gain := make([]float64, len(rep.PerImage.PSNR))
		for i := range gain {
			gain[i] = rep.PerImage.PSNRMeanOfK[i] - rep.PerImage.PSNR[i]
		}
		g := statOf(gain)
		cell.Calib = &g
	}
	return cell, nil
}

// restoreKID is KID between the restorations (clipped by report) and the reference features.
func restoreKID(clf *layers.Classifier, out []float64, run *restore.Job, ref []float32) (*stat, error) {
	x := make([]float32, 0, len(out))
	d := run.Task.Dim()
	rows := 0
	for r := 0; r*d < len(out); r++ {
		if restore.Diverged(out[r*d : (r+1)*d]) {
			continue
		}
		for _, v := range out[r*d : (r+1)*d] {
			x = append(x, float32(v))
		}
		rows++
	}
	if rows < 2 {
		return nil, nil
	}
	src, err := fid.RowsSource(x, run.Task.C, run.Task.H, run.Task.W)
	if err != nil {
		return nil, err
	}
	ext := fid.NewClassifierFeatures(clf)
	feats, err := fid.Extract(ext, src, restore.Batch, nil)
	if err != nil {
		return nil, err
	}
	k, se, err := fid.KID(feats, ref, ext.Dim(), fid.DefaultKID)
	if err != nil {
		return nil, err
	}
	return &stat{Mean: k, SE: se, N: rows}, nil
}

// restoreKIDReference extracts the classifier features of every image of the data set spec.
func restoreKIDReference(c *cli.Context, clf *layers.Classifier, spec string, shape *imagedata.Dataset) ([]float32, error) {
	ds, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return nil, usageErr("--kid-ref: %v", err)
	}
	if ds.C != shape.C || ds.H != shape.H || ds.W != shape.W {
		return nil, usageErr("--kid-ref %s holds %d×%d×%d images, the models' are %d×%d×%d", spec, ds.C, ds.H, ds.W, shape.C, shape.H, shape.W)
	}
	fmt.Fprintf(c.App.ErrWriter, "experiment restore: KID reference: features of the %d images of %s\n", ds.Len(), spec)
	return fid.Extract(fid.NewClassifierFeatures(clf), fid.DatasetSource(ds), 256, nil)
}

// restorePriorMoments reads --prior (its first --prior-n images) and returns their mean and
// covariance (+1e-6·I, as scripts/restore_baselines.py).
func restorePriorMoments(c *cli.Context, priorN int, spec string, shape *imagedata.Dataset) ([]float64, []float64, error) {
	ds, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return nil, nil, usageErr("--prior: %v", err)
	}
	if ds.C != shape.C || ds.H != shape.H || ds.W != shape.W {
		return nil, nil, usageErr("--prior %s holds %d×%d×%d images, the models' are %d×%d×%d", spec, ds.C, ds.H, ds.W, shape.C, shape.H, shape.W)
	}
	n := ds.Len()
	if k := priorN; k > 0 {
		n = min(n, k)
	}
	d := ds.C * ds.H * ds.W
	if err := checkBudget("prior-n", int64(n)*int64(d)+2*int64(d)*int64(d), 8); err != nil {
		return nil, nil, err
	}
	x := make([]float32, n*d)
	for i := range n {
		ds.Scale(x[i*d:(i+1)*d], ds.Pixels(i), false, nil)
	}
	fmt.Fprintf(c.App.ErrWriter, "experiment restore: baselines: the moments of %d images of %s\n", n, spec)
	mean, cov, err := restore.Moments(x, n, d, 1e-6)
	if err != nil {
		return nil, nil, usageErr("--prior: %v", err)
	}
	return mean, cov, nil
}

// restoreBaselines measures mean fill, LMMSE and one Gaussian-posterior sample on the images and
// measurements of p (nil when the task does not apply). The operator is factored once, or per image
// when the mask is drawn per image.
func restoreBaselines(p restore.Params, m *train.Model, mean, cov []float64) ([]*restoreStudyCell, error) {
	p.Method, p.NFE = restore.MethodDDNM, 2
	if p.Task.Name == restore.TaskDenoise {
		p.Method = ""
	}
	run, err := restore.Prepare(p, m)
	var ie *restore.InputError
	switch {
	case errors.As(err, &ie):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if err := run.LoadImages(); err != nil {
		return nil, restoreErr(err)
	}
	start := time.Now()
	perImage := p.Task.Name == restore.TaskInpaintRandom || (p.Task.Name == restore.TaskInpaintBox && p.Task.BoxPos == restore.BoxRandom)
	n, d := len(run.Images), run.Task.Dim()
	names := []string{"mean fill", "LMMSE", "Gaussian sample"}
	psnr, ssim := [3][]float64{}, [3][]float64{}
	var post *restore.LinearPosterior
	x := make([]float64, d)
	z := make([]float64, d)
	for i := range n {
		pr := run.Problems[i]
		if post == nil || perImage {
			if post, err = restore.NewLinearPosterior(mean, cov, pr.Op, pr.SigmaY, restore.BaselineJitter); err != nil {
				return nil, err
			}
		}
		st := rng.New(sample.ChunkSeed(p.Seed, run.Images[i]) ^ 0x6261736531) // "base1": the baseline's own stream
		for j := range z {
			z[j] = st.Normal()
		}
		for b := range 3 {
			switch b {
			case 0:
				restore.MeanFill(x, pr.Op, pr.Y, mean)
			case 1:
				post.PosteriorMean(x, pr.Y)
			case 2:
				if err := post.Sample(x, pr.Y, z); err != nil {
					return nil, err
				}
			}
			for j, v := range x {
				x[j] = math.Max(-1, math.Min(1, v))
			}
			s, err := restore.SSIM(x, run.Truth[i], run.Task.C, run.Task.H, run.Task.W)
			if err != nil {
				return nil, err
			}
			psnr[b] = append(psnr[b], restore.CapPSNR(restore.PSNR(x, run.Truth[i])))
			ssim[b] = append(ssim[b], s)
		}
	}
	wall := time.Since(start).Seconds() / 3
	cells := make([]*restoreStudyCell, 3)
	for b, name := range names {
		cells[b] = &restoreStudyCell{Task: p.Task.Name, SigmaY: p.Task.Noise, Method: name, Model: "baseline", PSNR: statOf(psnr[b]),
			SSIM: statOf(ssim[b]), Wall: wall, baseline: true, per: restore.PerImage{PSNR: psnr[b], SSIM: ssim[b]}}
	}
	return cells, nil
}

// pairedDifference is A − B per image, mean ± s.e. over the images both measured.
func pairedDifference(a, b *restoreStudyCell) restorePairCell {
	diff := func(x, y []float64) []float64 {
		if x == nil || y == nil {
			return nil
		}
		out := make([]float64, len(x))
		for i := range x {
			out[i] = x[i] - y[i] // NaN where either diverged
		}
		return out
	}
	pc := restorePairCell{Task: a.Task, SigmaY: a.SigmaY, Method: a.Method, NFE: a.NFE, A: a.Model, B: b.Model,
		PSNR: statOf(diff(a.per.PSNR, b.per.PSNR)), SSIM: statOf(diff(a.per.SSIM, b.per.SSIM))}
	if a.FDist != nil && b.FDist != nil {
		fd, ag := statOf(diff(a.per.FDist, b.per.FDist)), statOf(diff(a.per.Agree, b.per.Agree))
		pc.FDist, pc.Agree = &fd, &ag
	}
	return pc
}

// markdown writes the study's tables.
func (s *restoreStudy) markdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Images %d … %d of `%s`, %d restoration(s) each, seed %d; holdctl %s.\n\n", s.First, s.First+s.N-1, s.In, s.K, s.Seed, s.Version)
	for _, m := range s.Models {
		fmt.Fprintf(&b, "- `%s`: `%s` (%s)\n", m.Name, m.Dir, m.SDE)
	}
	if s.Prior != "" {
		fmt.Fprintf(&b, "- baselines: the mean and covariance of `%s`\n", s.Prior)
	}
	if s.KIDRef != "" {
		fmt.Fprintf(&b, "- KID against the classifier features of all of `%s`\n", s.KIDRef)
	}
	calib := s.K > 1
	b.WriteString("\nPSNR (dB) and SSIM on [0, 1], mean ± s.e. over images")
	if calib {
		fmt.Fprintf(&b, "; calibration: PSNR of the mean of %d samples − PSNR of one (a calibrated sampler: %.2f dB)", s.K, 10*math.Log10(2*float64(s.K)/float64(s.K+1)))
	}
	b.WriteString(".\n\n| task | σ_y | method | NFE | model | PSNR | SSIM | feature dist. | class agr. | KID | RMS(Ax − y) |")
	if calib {
		b.WriteString(" calibration |")
	}
	b.WriteString(" VJPs | s |\n|---|---|---|---|---|---|---|---|---|---|---|")
	if calib {
		b.WriteString("---|")
	}
	b.WriteString("---|---|\n")
	for _, c := range s.Cells {
		nfe := "—"
		if !c.baseline {
			nfe = strconv.Itoa(c.NFE)
		}
		fmt.Fprintf(&b, "| %s | %g | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.Task, c.SigmaY, c.Method, nfe, c.Model,
			pm(c.PSNR, 2), pm(c.SSIM, 3), pmp(c.FDist, 4), pmp(c.Agree, 3), pmp(c.KID, 1), rmsText(c))
		if calib {
			fmt.Fprintf(&b, " %s |", pmp(c.Calib, 2))
		}
		fmt.Fprintf(&b, " %d | %.0f |\n", c.VJP, c.Wall)
	}
	if len(s.Pairs) > 0 {
		b.WriteString("\nPaired differences A − B (the same images, masks, measurements and seeds), mean ± s.e. over images:\n\n")
		b.WriteString("| task | σ_y | method | NFE | A − B | ΔPSNR | ΔSSIM | Δfeature dist. | Δclass agr. |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, p := range s.Pairs {
			fmt.Fprintf(&b, "| %s | %g | %s | %d | %s − %s | %s | %s | %s | %s |\n", p.Task, p.SigmaY, p.Method, p.NFE, p.A, p.B,
				pm(p.PSNR, 2), pm(p.SSIM, 3), pmp(p.FDist, 4), pmp(p.Agree, 3))
		}
	}
	if len(s.Skipped) > 0 {
		b.WriteString("\nSkipped:\n\n")
		for _, k := range s.Skipped {
			fmt.Fprintf(&b, "- %s\n", k)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func pm(s stat, digits int) string {
	if math.IsNaN(s.Mean) {
		return "—"
	}
	return fmt.Sprintf("%.*f ± %.*f", digits, s.Mean, digits, s.SE)
}

func pmp(s *stat, digits int) string {
	if s == nil {
		return "—"
	}
	return pm(*s, digits)
}

func rmsText(c *restoreStudyCell) string {
	if c.baseline {
		return "—"
	}
	return fmt.Sprintf("%.2g", c.RMS)
}
