package main

// holdctl restore: image restoration with a trained image model (issue 46; the specification's §3):
// inpainting, super-resolution, deblurring and denoising by package restore's methods in the aligned
// gauge, measured by PSNR, SSIM, the residual of the measurement and, with --features, the shipped
// classifier's feature distance and class agreement.

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/autograd"
	"holdgo/data"
	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/outpath"
	"holdgo/layers"
	"holdgo/restore"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// The solvers of restore's Restorer as --sampler names: the aligned gauge's steps (sample's a-anc,
// a-ddim, a-sde2) and DDNM+'s own step.
const (
	restoreStepDDNM = "a-ddnm"
	restoreStepAnc  = "a-anc"
	restoreStepDDIM = "a-ddim"
	restoreStepSDE2 = "a-sde2"
)

var restoreSteps = map[string]string{restoreStepAnc: restore.StepAnc, restoreStepDDIM: restore.StepDDIM, restoreStepSDE2: restore.StepSDE2}

// restoreBatch is the number of samples restored together (images × --samples-per-image): the states
// of one batch are all that is held at once. Every image's randomness is keyed by its index, so the
// batch does not change a result.
const restoreBatch = 64

// restoreForwardBatch is the samples of one forward pass of the network (without --forward-mib): every
// pass holds exactly this many (train.NetworkScorer.PadBatch), so a small one wastes little on the
// last, padded pass of a run and on holdctl serve's single images.
const restoreForwardBatch = 8

// restoreDPSScale is DPS's default ζ: swept at the default NFE 50 on the first 50 training images
// (inpaint-box, fmnist-hold3; docs/restoration.md): PSNR 16.6 dB at DPS's own 0.3 (tuned for 1,000 steps),
// 20.2 at 1, 20.8 at 3, 19.2 at 10.
const restoreDPSScale = 3

// restorePSNRCap stands in for the PSNR of a restoration identical to the truth (+Inf, which JSON
// cannot hold).
const restorePSNRCap = 100.0

// restoreNumbers are the numeric settings that holdctl restore and experiment restore share (the
// bounds hold whatever the task and method use: a NaN or out-of-range value is refused even where it
// would not be read).
type restoreNumbers struct {
	Box       int     `flag:"box" min:"1" max:"16384" help:"inpaint-box: side of the missing square in pixels"` // imagedata.MaxSide
	Drop      float64 `flag:"drop" gt:"0" lt:"1" help:"inpaint-random: probability that a pixel is missing, in (0, 1)"`
	BlurSigma float64 `flag:"blur-sigma" gt:"0" max:"3" help:"deblur-gauss: σ_b of the separable 7-tap Gaussian in pixels, in (0, 3]"`
	Noise     float64 `flag:"noise" min:"0" max:"100" help:"measurement noise σ_y in the data's units ([−1, 1]; DDNM's and DDRM's [0, 1] values double)"`
	Resample  int     `flag:"resample" min:"1" max:"1048576" help:"repaint: passes r over every block of --jump steps (r× the NFE per step)"`
	Jump      int     `flag:"jump" min:"1" max:"1048576" help:"repaint: steps per block"`
	Eta       float64 `flag:"eta" min:"0" max:"1" help:"ddnm: DDNM+'s η in [0, 1]"`
	DPSScale  float64 `flag:"dps-scale" gt:"0" max:"1e6" help:"dps: step size ζ (VP's DPS in [−1, 1] units; tied to the NFE: 3 is the best of 0.3, 1, 3, 10 at NFE 50 on training images, DPS's 0.3 is for 1,000 steps)"`
	PiGDMVar  float64 `flag:"pigdm-var" gt:"0" max:"1e6" help:"pigdm: the data's per-pixel variance v (1 in ΠGDM; 0.35 for Fashion-MNIST in [−1, 1])"`
	SigmaMin  float64 `flag:"sigma-min" gt:"0" max:"100" help:"noise level σ at which the grid ends"`
	Clip      float64 `flag:"clip" min:"0" max:"1e6" note:"0: off" help:"threshold x̂₀ to [−clip, clip] before conditioning (0: off)"`
	First     int     `flag:"first" min:"0" max:"2147483647" help:"index in --in of the first image"`
	N         int     `flag:"n" min:"1" max:"2147483647" help:"number of images"`
	K         int     `flag:"samples-per-image" min:"1" max:"65536" help:"restorations K of each image"`
	Seed      uint64  `flag:"seed" help:"random seed (image i's streams are keyed by it and i)"`
	threadsOption
	ForwardMiB int `flag:"forward-mib" min:"0" max:"1048576" note:"at most the memory budget" help:"memory for one forward pass's activations in MiB (0: passes of 64 samples)"`
}

// defaultRestoreNumbers are restoreNumbers' defaults, n images.
func defaultRestoreNumbers(n int) restoreNumbers {
	return restoreNumbers{Box: 14, Drop: 0.7, BlurSigma: 1, Resample: 4, Jump: 10, Eta: restore.DefaultEta, DPSScale: restoreDPSScale,
		PiGDMVar: 1, SigmaMin: sample.DefaultSigmaMin, Clip: 1, N: n, K: 1, Seed: 1}
}

// restoreOptions are holdctl restore's numeric settings.
type restoreOptions struct {
	restoreNumbers
	NFE int `flag:"nfe" min:"2" max:"1048576" note:"the read-out is one" help:"forward passes per sample, the read-out and RePaint's resampling included"` // maxNFE
}

func restoreCommand() *cli.Command {
	opt := restoreOptions{restoreNumbers: defaultRestoreNumbers(64), NFE: 50}
	return withConfig(&cli.Command{
		Name:  "restore",
		Usage: "restore degraded images with a trained image model: inpainting, super-resolution, deblurring, denoising",
		Description: "Measures y = A x + σ_y n of each image of --in (A from --task; the mask, the noise and the method's\n" +
			"noise from Philox streams keyed by --seed and the image's index in --in) and samples K restorations with\n" +
			"--method in the aligned gauge (HOLD-n, CLD, VP and VE alike). --nfe counts forward passes, the read-out\n" +
			"and RePaint's resampling included; ΠGDM and DPS add one vector–Jacobian product per step. Writes the\n" +
			"restorations, clipped to [−1, 1], as .npy (n·K, C·H·W) and a PNG grid (rows: images; columns: degraded,\n" +
			"K restorations, truth), and prints PSNR and SSIM (mean ± s.e. over images, on [0, 1]) and the RMS of\n" +
			"A x − y against σ_y.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Usage: "trained image model: a run directory, checkpoint file or export (models/fmnist-hold3)"},
			&cli.BoolFlag{Name: "raw-weights", Usage: "use the raw weights instead of the EMA weights (a run, not an export)"},
			&cli.StringFlag{Name: "task", Usage: "inpaint-box, inpaint-random, sr2, sr4, deblur-gauss (needs --noise > 0) or denoise (needs --noise > 0)"},
			&cli.StringFlag{Name: "box-pos", Value: restore.BoxCenter, Usage: "inpaint-box: center or random (per image)"},
			&cli.StringFlag{Name: "method", Usage: "replace, repaint, ddnm, pigdm or dps (default ddnm; for denoise none: the exact start at σ = σ_y)"},
			&cli.StringFlag{Name: "sampler", Usage: "a-ddnm (ddnm only), a-anc, a-ddim or a-sde2 (not with repaint); default a-ddnm for ddnm, a-anc for replace and repaint, a-sde2 otherwise"},
			&cli.StringFlag{Name: "grid", Value: sample.GridVPMatched, Usage: "σ-grid: edm, vpmatched, lambda or vplambda"},
			&cli.StringFlag{Name: "in", Usage: "images to degrade: a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …) or a .npy of (n, C·H·W) values in [−1, 1]"},
			&cli.StringSliceFlag{Name: "out", Value: cli.NewStringSlice("restored.npy"), Usage: "outputs: .npy (float32, (n·K, C·H·W), image-major) and/or .png (the grid)"},
			&cli.StringFlag{Name: "features", Usage: "classifier checkpoint (models/fmnist-classifier.safetensors): report the feature distance and class agreement"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			forceFlag(),
		},
		Before: oneProcess("restore"),
		Action: func(c *cli.Context) error { return runRestore(c, opt) },
	}, &opt)
}

// restoreParams are the settings of one restoration run: restore's flags, or one cell of experiment
// restore.
type restoreParams struct {
	Ckpt       string
	RawWeights bool
	Task       restore.Task // the shape is the model's
	Method     string       // "" picks the task's default
	Eta        float64
	Resample   int
	Jump       int
	DPSScale   float64
	PiGDMVar   float64
	Clip       float64
	Sampler    string // "" picks the method's default
	Grid       string
	NFE        int
	SigmaMin   float64
	In         string
	First      int
	N          int
	K          int
	Seed       uint64
	Outs       []string
}

// restoreParamsFrom reads restore's flags: the strings from c, the numbers from o.
func restoreParamsFrom(c *cli.Context, o restoreOptions) restoreParams {
	return restoreParams{Ckpt: c.String("ckpt"), RawWeights: c.Bool("raw-weights"),
		Task: restore.Task{Name: c.String("task"), Box: o.Box, BoxPos: c.String("box-pos"), Drop: o.Drop,
			BlurSigma: o.BlurSigma, Noise: o.Noise},
		Method: c.String("method"), Eta: o.Eta, Resample: o.Resample, Jump: o.Jump,
		DPSScale: o.DPSScale, PiGDMVar: o.PiGDMVar, Clip: o.Clip,
		Sampler: c.String("sampler"), Grid: c.String("grid"), NFE: o.NFE, SigmaMin: o.SigmaMin,
		In: c.String("in"), First: o.First, N: o.N, K: o.K, Seed: o.Seed,
		Outs: c.StringSlice("out")}
}

// restoreRun is what one restore command does, checked.
type restoreRun struct {
	p        restoreParams
	model    *train.Model
	shape    *imagedata.Dataset // the model's image shape
	task     restore.Task
	method   restore.Method
	sampler  string
	grid     []float64
	start    bool // the exact denoising start at σ = σ_y
	k        int
	seed     uint64
	images   []int       // indices in --in
	truth    [][]float64 // [−1, 1]
	labels   []int       // nil when --in has none
	problems []restore.Problem
}

// restoreReport is the JSON (and the summary line) of a run.
type restoreReport struct {
	Ckpt           string          `json:"ckpt"`
	SDE            string          `json:"sde"`
	In             string          `json:"in"`
	First          int             `json:"first"`
	N              int             `json:"n"`
	K              int             `json:"samples_per_image"`
	Seed           uint64          `json:"seed"`
	Task           restoreTaskJSON `json:"task"`
	Method         restoreMethJSON `json:"method"`
	PSNR           float64         `json:"psnr"`
	PSNRSE         float64         `json:"psnr_se"`
	SSIM           float64         `json:"ssim"`
	SSIMSE         float64         `json:"ssim_se"`
	PSNRMeanOfK    *float64        `json:"psnr_mean_of_k,omitempty"`
	PSNRMeanOfKSE  *float64        `json:"psnr_mean_of_k_se,omitempty"`
	PSNRDegraded   float64         `json:"psnr_degraded"`
	RMSResidual    float64         `json:"rms_residual"`
	RMSResidualMax float64         `json:"rms_residual_max"`
	// RMSResidualPreclip is the largest RMS(A x − y) of the read-outs before they are clipped to
	// [−1, 1] (the methods' own constraint; clipping moves pooled and blurred measurements).
	RMSResidualPreclip float64  `json:"rms_residual_preclip_max"`
	SigmaY             float64  `json:"sigma_y"`
	FDist              *float64 `json:"fdist,omitempty"`
	FDistSE            *float64 `json:"fdist_se,omitempty"`
	ClassAgreement     *float64 `json:"class_agreement,omitempty"`
	ClassAgreeSE       *float64 `json:"class_agreement_se,omitempty"`
	ClassReference     string   `json:"class_reference,omitempty"`
	NFE                int      `json:"nfe"`
	VJP                int      `json:"vjp"`
	WallSeconds        float64  `json:"wall_s"`
	MaxAbsPreclip      float64  `json:"max_abs_preclip"`
	NonFinite          int      `json:"nonfinite"`
	Outputs            []string `json:"outputs"`
	HoldctlVersion     string   `json:"version"`

	// perImage holds each image's measures (NaN where every sample of the image diverged), in --in's
	// order, for experiment restore's paired differences.
	perImage restorePerImage
}

// restorePerImage are the per-image measures of a run, each averaged over the image's K samples.
type restorePerImage struct {
	PSNR, SSIM, PSNRMeanOfK, FDist, Agree []float64
}

type restoreTaskJSON struct {
	Name      string   `json:"name"`
	Box       *int     `json:"box,omitempty"`
	BoxPos    string   `json:"box_pos,omitempty"`
	Drop      *float64 `json:"drop,omitempty"`
	BlurSigma *float64 `json:"blur_sigma,omitempty"`
	Noise     float64  `json:"noise"`
	Measured  int      `json:"measurements"`
}

type restoreMethJSON struct {
	Name       string   `json:"name"`
	Sampler    string   `json:"sampler"`
	Grid       string   `json:"grid"`
	Steps      int      `json:"steps"`
	SigmaStart float64  `json:"sigma_start"`
	SigmaMin   float64  `json:"sigma_min"`
	Clip       float64  `json:"clip"`
	Eta        *float64 `json:"eta,omitempty"`
	Resample   *int     `json:"resample,omitempty"`
	Jump       *int     `json:"jump,omitempty"`
	DPSScale   *float64 `json:"dps_scale,omitempty"`
	PiGDMVar   *float64 `json:"pigdm_var,omitempty"`
	ExactStart bool     `json:"exact_start,omitempty"`
}

// ssimMinSide is the smallest image side restore.SSIM measures (its 11×11 Gaussian window).
const ssimMinSide = 11

func runRestore(c *cli.Context, opt restoreOptions) error {
	if c.NArg() > 0 {
		return usageErr("restore takes no arguments, got %q", c.Args().First())
	}
	opt.apply()
	for _, f := range []string{"ckpt", "task", "in"} {
		if c.String(f) == "" {
			return usageErr("restore needs --ckpt DIR (an image model), --task and --in IMAGES; --%s is missing", f)
		}
	}
	p := restoreParamsFrom(c, opt)
	m, err := train.LoadModel(p.Ckpt, p.RawWeights, "")
	if err != nil {
		return usageErr("%v", err)
	}
	if err := forwardMemory(opt.ForwardMiB, m); err != nil {
		return err
	}
	run, err := prepareRestore(p, m)
	if err != nil {
		return err
	}
	if run.shape.H < ssimMinSide || run.shape.W < ssimMinSide { // refused before, not after, the restoration
		return usageErr("restore: --ckpt %s is a model of %d×%d images; restore reports SSIM, whose window needs %d×%d pixels at least",
			c.String("ckpt"), run.shape.H, run.shape.W, ssimMinSide, ssimMinSide)
	}
	outs := p.Outs
	if err := checkRestoreOutputs(c, run, outs); err != nil {
		return err
	}
	var clf *layers.Classifier
	if p := c.String("features"); p != "" {
		if clf, err = loadRestoreClassifier(p, run.shape); err != nil {
			return err
		}
	}
	if err := run.loadImages(); err != nil {
		return err
	}
	start := time.Now()
	out, stats, err := run.restore()
	if err != nil {
		return err
	}
	rep, err := run.report(c.App.ErrWriter, out, stats, clf)
	if err != nil {
		return err
	}
	rep.WallSeconds = time.Since(start).Seconds()
	if err := run.write(outs, out); err != nil {
		return err
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	fmt.Fprintln(c.App.Writer, rep.summary())
	return nil
}

// prepareRestore checks the task, the method and its sampler of p against the model m and builds the
// σ-grid.
func prepareRestore(p restoreParams, m *train.Model) (*restoreRun, error) {
	shape, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return nil, usageErr("--ckpt %s is a model of %s, not of images: restore needs an image model", p.Ckpt, m.Config.Data)
	}
	if ns, ok := m.Score.(*train.NetworkScorer); ok {
		// Passes of one size whatever the images and K: an image restores to the same bits in any run.
		ns.PadBatch = true
		if ns.ForwardBatch == 0 && ns.MemoryBudget == 0 {
			ns.ForwardBatch = restoreForwardBatch
		}
	}
	run := &restoreRun{p: p, model: m, shape: shape, k: p.K, seed: p.Seed}
	run.task = p.Task
	run.task.C, run.task.H, run.task.W = shape.C, shape.H, shape.W
	if err := run.task.Check(); err != nil {
		return nil, usageErr("%v", err)
	}
	name := p.Method
	switch {
	case name == "" && run.task.Name == restore.TaskDenoise:
		name = restore.MethodNone
	case name == "":
		name = restore.MethodDDNM
	case name == restore.MethodNone && run.task.Name != restore.TaskDenoise:
		return nil, usageErr("--method none restores nothing for %s (it is denoise's exact start): use replace, repaint, ddnm, pigdm or dps", run.task.Name)
	case name == restore.MethodExact:
		return nil, usageErr("--method exact needs the posterior's own denoiser, which only an oracle prior has (package restore's tests)")
	}
	run.start = name == restore.MethodNone
	run.method = restore.Method{Name: name, Eta: p.Eta, Resample: p.Resample, Jump: p.Jump,
		DPSScale: p.DPSScale, PiGDMVar: p.PiGDMVar, Clip: p.Clip}
	run.sampler = p.Sampler
	switch {
	case run.sampler == "" && name == restore.MethodDDNM:
		run.sampler = restoreStepDDNM
	case run.sampler == "" && (name == restore.MethodReplace || name == restore.MethodRepaint):
		run.sampler = restoreStepAnc
	case run.sampler == "":
		run.sampler = restoreStepSDE2
	}
	if name == restore.MethodDDNM && run.sampler != restoreStepDDNM {
		return nil, usageErr("--method ddnm takes its own step: --sampler %s (or none), not %s", restoreStepDDNM, run.sampler)
	}
	if name != restore.MethodDDNM {
		step, ok := restoreSteps[run.sampler]
		if !ok {
			return nil, usageErr("--sampler %s: --method %s steps with %s, %s or %s (%s is ddnm's own)", run.sampler, name,
				restoreStepAnc, restoreStepDDIM, restoreStepSDE2, restoreStepDDNM)
		}
		run.method.Step = step
	}
	if err := run.method.Check(); err != nil {
		return nil, usageErr("%v", err)
	}
	if name == restore.MethodPiGDM || name == restore.MethodDPS {
		if _, ok := m.Score.(sample.DivScorer); !ok {
			return nil, usageErr("--method %s needs vector–Jacobian products of the score, which this model's score does not give", name)
		}
	}
	op, err := run.task.Operator(run.seed, 0)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	if err := run.method.CheckOperator(op); err != nil {
		return nil, usageErr("--method %s with --task %s: %v", name, run.task.Name, err)
	}
	return run, run.makeGrid()
}

// makeGrid builds the σ-grid: from the horizon, or for the exact denoising start from the time where
// the noise level is σ_y; --nfe − 1 steps (the read-out is one forward pass), divided by --resample
// for repaint.
func (r *restoreRun) makeGrid() error {
	kind, nfe := r.p.Grid, r.p.NFE
	if !sample.IsSigmaGrid(kind) {
		return usageErr("--grid %s: restore steps in the noise level σ, give a σ-grid (edm, vpmatched, lambda or vplambda)", kind)
	}
	steps := nfe - 1
	if r.method.Name == restore.MethodRepaint {
		steps /= r.method.Resample
	}
	if steps < 1 {
		return usageErr("--nfe %d leaves no step for %s (one pass is the read-out; repaint takes --resample %d per step)", nfe, r.method.Name, r.method.Resample)
	}
	sde := r.model.SDE
	start := sde.Horizon()
	if r.start {
		t, err := sample.TimeAtNoiseLevel(sde, r.task.Noise, sde.MinTime(), sde.Horizon())
		if err != nil {
			return usageErr("--noise %g: no time of the SDE has that noise level for denoise's exact start: %v", r.task.Noise, err)
		}
		start = t
	}
	grid, err := sample.NewSigmaGrid(sde, kind, start, r.p.SigmaMin, steps)
	if err != nil {
		return usageErr("--grid %s: %v", kind, err)
	}
	r.grid = grid
	return nil
}

// checkRestoreOutputs checks every --out with the output guard before anything is computed: the
// checkpoint, its data and --in (and --features) are inputs.
func checkRestoreOutputs(c *cli.Context, r *restoreRun, outs []string) error {
	guard := outpath.New(c.Bool("force"))
	guard.Input(c.String("ckpt"), c.String("features"))
	guard.Input(r.model.Config.DataPath())
	guardData(guard, r.model.Config.Data)
	guardData(guard, c.String("in"))
	n, k, d := r.p.N, r.k, r.task.Dim()
	if err := checkBudget("n", int64(n)*int64(k)*int64(d)*int64(r.model.SDE.Blocks()+2), 8); err != nil {
		return err
	}
	var targets []output
	for _, o := range outs {
		ext := filepath.Ext(o)
		if ext != ".npy" && ext != ".png" {
			return usageErr("--out %s: want a .npy or .png file", o)
		}
		if err := checkWritableDir(o); err != nil {
			return usageErr("--out %s: %v", o, err)
		}
		if ext == ".npy" {
			if err := outpath.CheckSpace(o, uint64(n)*uint64(k)*uint64(d)*4+128); err != nil {
				return usageErr("--out: %v", strings.TrimPrefix(err.Error(), outpath.ErrRefused.Error()+": "))
			}
		} else if uint64(n)*uint64(k+2)*uint64(d) > maxPictureValues {
			return usageErr("--out %s: a grid of %d images × %d columns is too large a picture; write .npy only or restore fewer images", o, n, k+2)
		}
		targets = append(targets, output{"out", o, outpath.KindByExt(o)})
	}
	return checkOutputs(guard, targets...)
}

// loadImages reads images first … first+n−1 of --in, in [−1, 1], checks their shape against the
// model's, and measures each.
func (r *restoreRun) loadImages() error {
	in, first, n := r.p.In, r.p.First, r.p.N
	d := r.task.Dim()
	var (
		all   []float32
		count int
	)
	switch {
	case imagedata.IsSpec(in):
		ds, err := imagedata.Open(in, imagedata.Options{})
		if err != nil {
			return usageErr("--in: %v", err)
		}
		if ds.C != r.shape.C || ds.H != r.shape.H || ds.W != r.shape.W {
			return usageErr("--in %s holds %d×%d×%d images (C×H×W), the model's are %d×%d×%d", in, ds.C, ds.H, ds.W, r.shape.C, r.shape.H, r.shape.W)
		}
		count = ds.Len()
		if first+n > count {
			return usageErr("--first %d --n %d: %s holds %d images", first, n, in, count)
		}
		all = make([]float32, n*d)
		for i := range n {
			ds.Scale(all[i*d:(i+1)*d], ds.Pixels(first+i), false, nil)
		}
		if ds.Labels != nil {
			r.labels = ds.Labels[first : first+n]
		}
	case strings.HasSuffix(in, ".npy"):
		a, err := data.ReadNPY(in)
		if err != nil {
			return usageErr("--in: %v", inputErr(err))
		}
		if len(a.Shape) != 2 || a.Cols() != d {
			return usageErr("--in %s has shape %v: want (n, %d), images of %d×%d×%d values in [−1, 1]", in, a.Shape, d, r.shape.C, r.shape.H, r.shape.W)
		}
		count = a.Rows()
		if first+n > count {
			return usageErr("--first %d --n %d: %s holds %d images", first, n, in, count)
		}
		for i, v := range a.Data[first*d : (first+n)*d] {
			if !(math.Abs(v) <= 1+1e-6) {
				return usageErr("--in %s: value %v of image %d is outside [−1, 1] (images scaled as in training: 2k/255 − 1)", in, v, first+i/d)
			}
		}
		all = a.Float32()[first*d : (first+n)*d]
	default:
		return usageErr("--in %s: want a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …) or a .npy file", in)
	}
	return r.setImages(all, first)
}

// setImages takes the images of all (len(all)/d of them, values in [−1, 1], clipped to it) as images
// first, first+1, … (the index keys each image's randomness) and measures each: loadImages's images,
// or images given in memory (holdctl serve).
func (r *restoreRun) setImages(all []float32, first int) error {
	d := r.task.Dim()
	n := len(all) / d
	r.images = make([]int, n)
	r.truth = make([][]float64, n)
	r.problems = make([]restore.Problem, n)
	for i := range n {
		img := first + i
		q := make([]float64, d)
		for j, v := range all[i*d : (i+1)*d] {
			q[j] = math.Max(-1, math.Min(1, float64(v)))
		}
		op, err := r.task.Operator(r.seed, img)
		if err != nil {
			return usageErr("%v", err)
		}
		r.images[i], r.truth[i] = img, q
		r.problems[i] = restore.Problem{Op: op, Y: restore.Measure(op, q, r.task.Noise, r.seed, img), SigmaY: r.task.Noise}
	}
	return nil
}

// restore runs the method on every image, restoreBatch samples at a time, and returns the read-outs
// (n·K rows of d values, image-major, not clipped) and the work per sample.
func (r *restoreRun) restore() ([]float64, restore.Stats, error) {
	d, k := r.task.Dim(), r.k
	sde := r.model.SDE
	out := make([]float64, len(r.images)*k*d)
	var stats restore.Stats
	per := max(1, restoreBatch/k)
	for lo := 0; lo < len(r.images); lo += per {
		hi := min(len(r.images), lo+per)
		images := r.images[lo:hi]
		var (
			u   []float64
			err error
		)
		if r.start {
			ys := make([][]float64, hi-lo)
			for i := range ys {
				ys[i] = r.problems[lo+i].Y
			}
			if u, err = restore.DenoiseStates(sde, r.grid[0], ys, d, k, r.seed, images); err != nil {
				return nil, stats, err
			}
		} else {
			u = restore.PriorStates(sde, d, k, r.seed, images)
		}
		rs := &restore.Restorer{SDE: sde, Score: r.model.Score, Method: r.method, Grid: r.grid, Dim: d}
		x, st, err := rs.Run(u, r.problems[lo:hi], k, restore.PhiloxNoise{Seed: r.seed, Images: images})
		if err != nil {
			return nil, stats, err
		}
		copy(out[lo*k*d:], x)
		stats = st
	}
	return out, stats, nil
}

// degraded returns what the grid shows of image i's measurement: A⁺y (missing pixels 0, mid-gray;
// pooled values replicated), or y itself for the blur, whose A⁺ amplifies the noise.
func (r *restoreRun) degraded(i int) []float64 {
	p := r.problems[i]
	x := make([]float64, r.task.Dim())
	if r.task.Name == restore.TaskDeblur {
		copy(x, p.Y)
		return x
	}
	restore.Pinv(p.Op, x, p.Y)
	return x
}

// report clips the read-outs to [−1, 1] in place (as float32 values, as written) and measures them.
func (r *restoreRun) report(warn io.Writer, out []float64, st restore.Stats, clf *layers.Classifier) (*restoreReport, error) {
	d, k, n := r.task.Dim(), r.k, len(r.images)
	rep := &restoreReport{Ckpt: r.p.Ckpt, SDE: r.model.Config.SDE, In: r.p.In, First: r.p.First, N: n, K: k,
		Seed: r.seed, SigmaY: r.task.Noise, NFE: st.NFE, VJP: st.VJP, Outputs: r.p.Outs, HoldctlVersion: version}
	rep.Task = restoreTaskJSON{Name: r.task.Name, Noise: r.task.Noise, Measured: r.problems[0].Op.Rows()}
	switch r.task.Name {
	case restore.TaskInpaintBox:
		rep.Task.Box, rep.Task.BoxPos = &r.task.Box, r.task.BoxPos
	case restore.TaskInpaintRandom:
		rep.Task.Drop = &r.task.Drop
	case restore.TaskDeblur:
		rep.Task.BlurSigma = &r.task.BlurSigma
	}
	smax, _ := sample.NoiseLevel(r.model.SDE, r.grid[0])
	rep.Method = restoreMethJSON{Name: r.method.Name, Sampler: r.sampler, Grid: r.p.Grid, Steps: len(r.grid) - 1,
		SigmaStart: smax, SigmaMin: r.p.SigmaMin, Clip: r.method.Clip, ExactStart: r.start}
	switch r.method.Name {
	case restore.MethodDDNM:
		rep.Method.Eta = &r.method.Eta
	case restore.MethodRepaint:
		rep.Method.Resample, rep.Method.Jump = &r.method.Resample, &r.method.Jump
	case restore.MethodDPS:
		rep.Method.DPSScale = &r.method.DPSScale
	case restore.MethodPiGDM:
		rep.Method.PiGDMVar = &r.method.PiGDMVar
	}
	raw := append([]float64(nil), out...)
	psnr, ssim, psnrMean, degraded := make([]float64, 0, n), make([]float64, 0, n), make([]float64, 0, n), make([]float64, n)
	var rmsSum float64
	var rmsCount int
	rep.perImage = restorePerImage{PSNR: nanSlice(n), SSIM: nanSlice(n), PSNRMeanOfK: nanSlice(n), FDist: nanSlice(n), Agree: nanSlice(n)}
	for i := range n {
		truth, p := r.truth[i], r.problems[i]
		deg := r.degraded(i)
		for j, v := range deg {
			deg[j] = math.Max(-1, math.Min(1, v))
		}
		degraded[i] = capPSNR(restore.PSNR(deg, truth))
		mean := make([]float64, d)
		res := make([]float64, p.Op.Rows())
		var ps, ss float64
		finite := 0
		for s := range k {
			x := out[(i*k+s)*d : (i*k+s+1)*d]
			ok := true
			for j, v := range x {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					ok = false
					continue
				}
				rep.MaxAbsPreclip = math.Max(rep.MaxAbsPreclip, math.Abs(v))
				x[j] = float64(float32(math.Max(-1, math.Min(1, v))))
			}
			if !ok {
				rep.NonFinite++
				continue
			}
			finite++
			rep.RMSResidualPreclip = math.Max(rep.RMSResidualPreclip, residualRMS(p, raw[(i*k+s)*d:(i*k+s+1)*d], res))
			v, err := restore.SSIM(x, truth, r.task.C, r.task.H, r.task.W)
			if err != nil {
				return nil, err
			}
			ps += capPSNR(restore.PSNR(x, truth))
			ss += v
			e := residualRMS(p, x, res)
			rmsSum += e
			rmsCount++
			rep.RMSResidualMax = math.Max(rep.RMSResidualMax, e)
			for j, v := range x {
				mean[j] += v
			}
		}
		if finite == 0 {
			continue
		}
		psnr = append(psnr, ps/float64(finite))
		ssim = append(ssim, ss/float64(finite))
		for j := range mean {
			mean[j] /= float64(finite)
		}
		psnrMean = append(psnrMean, capPSNR(restore.PSNR(mean, truth)))
		rep.perImage.PSNR[i], rep.perImage.SSIM[i] = ps/float64(finite), ss/float64(finite)
		rep.perImage.PSNRMeanOfK[i] = psnrMean[len(psnrMean)-1]
	}
	if len(psnr) == 0 {
		return nil, fmt.Errorf("holdctl: every restoration diverged (NaN or Inf): try --clip 1, more NFE or another method")
	}
	ps, ss := sample.MeanSE(psnr), sample.MeanSE(ssim)
	rep.PSNR, rep.PSNRSE, rep.SSIM, rep.SSIMSE = ps.Mean, ps.SE, ss.Mean, ss.SE
	rep.PSNRDegraded = sample.MeanSE(degraded).Mean
	rep.RMSResidual = rmsSum / float64(rmsCount)
	if k > 1 {
		pm := sample.MeanSE(psnrMean)
		rep.PSNRMeanOfK, rep.PSNRMeanOfKSE = &pm.Mean, &pm.SE
	}
	if rep.NonFinite > 0 {
		fmt.Fprintf(warn, "warning: %d of %d restorations diverged (NaN or Inf); they are left out of the measures and kept in the .npy\n", rep.NonFinite, n*k)
	}
	if clf != nil {
		if err := r.classify(rep, clf, out); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// residualRMS is RMS(A x − y) of problem p (res: scratch of p.Op.Rows() values).
func residualRMS(p restore.Problem, x, res []float64) float64 {
	p.Op.Apply(res, x)
	var e float64
	for j, y := range p.Y {
		e += (res[j] - y) * (res[j] - y)
	}
	return math.Sqrt(e / float64(len(res)))
}

func capPSNR(v float64) float64 { return math.Min(v, restorePSNRCap) }

// loadRestoreClassifier loads --features and checks it takes the model's images.
func loadRestoreClassifier(path string, shape *imagedata.Dataset) (*layers.Classifier, error) {
	clf, _, err := fid.LoadClassifier(path)
	if err != nil {
		return nil, usageErr("--features: %v", err)
	}
	if err := fid.NewClassifierFeatures(clf).Check(shape.C, shape.H, shape.W); err != nil {
		return nil, usageErr("--features %s: %v", path, err)
	}
	return clf, nil
}

// classifierOutputs returns the penultimate features (unit-normalised) and the predicted class of
// each of the n images of x.
func classifierOutputs(clf *layers.Classifier, x []float32, n, c, h, w int) ([][]float64, []int) {
	g := autograd.NewTape(tensor.CPU)
	g.SetNoGrad(true)
	d := c * h * w
	feats, classes := make([][]float64, n), make([]int, n)
	for lo := 0; lo < n; lo += restoreBatch {
		hi := min(n, lo+restoreBatch)
		g.Reset()
		f, logits := clf.Forward(g, g.Const(tensor.FromSlice(append([]float32(nil), x[lo*d:hi*d]...), hi-lo, c, h, w)))
		fd, ld := f.T.Data(), logits.T.Data()
		nf, nc := len(fd)/(hi-lo), len(ld)/(hi-lo)
		for i := range hi - lo {
			v := make([]float64, nf)
			var norm float64
			for j := range v {
				v[j] = float64(fd[i*nf+j])
				norm += v[j] * v[j]
			}
			if norm = math.Sqrt(norm); norm > 0 {
				for j := range v {
					v[j] /= norm
				}
			}
			feats[lo+i] = v
			best := 0
			for j := range nc {
				if ld[i*nc+j] > ld[i*nc+best] {
					best = j
				}
			}
			classes[lo+i] = best
		}
	}
	return feats, classes
}

// classify adds the feature distance ‖φ̂/|φ̂| − φ/|φ|‖² of the classifier's penultimate features between
// each restoration and its truth, and the agreement of the restoration's class with the truth's label
// (or, where --in has no labels, with the class the classifier gives the truth), per image averaged
// over its K samples, mean ± s.e. over images; diverged samples are left out.
func (r *restoreRun) classify(rep *restoreReport, clf *layers.Classifier, out []float64) error {
	d, k, n := r.task.Dim(), r.k, len(r.images)
	c, h, w := r.task.C, r.task.H, r.task.W
	truth := make([]float32, n*d)
	for i, q := range r.truth {
		for j, v := range q {
			truth[i*d+j] = float32(v)
		}
	}
	x := make([]float32, n*k*d)
	for i, v := range out {
		x[i] = float32(v)
	}
	tf, tc := classifierOutputs(clf, truth, n, c, h, w)
	xf, xc := classifierOutputs(clf, x, n*k, c, h, w)
	ref := tc
	rep.ClassReference = "the classifier's class of the truth (--in has no labels)"
	if r.labels != nil {
		ref = r.labels
		rep.ClassReference = "label"
	}
	var fdist, agree []float64
	for i := range n {
		var fs, as float64
		finite := 0
		for s := range k {
			row := i*k + s
			if restoreDiverged(out[row*d : (row+1)*d]) {
				continue
			}
			finite++
			for j, v := range xf[row] {
				fs += (v - tf[i][j]) * (v - tf[i][j])
			}
			if xc[row] == ref[i] {
				as++
			}
		}
		if finite > 0 {
			fdist = append(fdist, fs/float64(finite))
			agree = append(agree, as/float64(finite))
			rep.perImage.FDist[i], rep.perImage.Agree[i] = fs/float64(finite), as/float64(finite)
		}
	}
	fd, ag := sample.MeanSE(fdist), sample.MeanSE(agree)
	rep.FDist, rep.FDistSE, rep.ClassAgreement, rep.ClassAgreeSE = &fd.Mean, &fd.SE, &ag.Mean, &ag.SE
	return nil
}

// nanSlice is n NaNs: per-image measures not (yet) measured.
func nanSlice(n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = math.NaN()
	}
	return v
}

func restoreDiverged(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return true
		}
	}
	return false
}

// write writes the restorations (clipped by report) to every .npy and the grid to every .png, each
// atomically.
func (r *restoreRun) write(outs []string, out []float64) error {
	d, k, n := r.task.Dim(), r.k, len(r.images)
	var x []float32
	for _, o := range outs {
		if filepath.Ext(o) != ".npy" {
			continue
		}
		if x == nil {
			x = make([]float32, len(out))
			for i, v := range out {
				x[i] = float32(v)
			}
		}
		if err := data.WriteNPY32(o, x, n*k, d); err != nil {
			return err
		}
	}
	var tiles []float32
	for _, o := range outs {
		if filepath.Ext(o) != ".png" {
			continue
		}
		if tiles == nil {
			tiles = make([]float32, 0, n*(k+2)*d)
			for i := range n {
				for _, v := range r.degraded(i) {
					tiles = append(tiles, float32(v))
				}
				for _, v := range out[i*k*d : (i+1)*k*d] {
					tiles = append(tiles, float32(v))
				}
				for _, v := range r.truth[i] {
					tiles = append(tiles, float32(v))
				}
			}
		}
		scale := 1
		if r.task.H <= 32 {
			scale = 2
		}
		if err := imagedata.WriteGrid(o, tiles, n*(k+2), r.task.C, r.task.H, r.task.W, k+2, scale); err != nil {
			return err
		}
	}
	return nil
}

// summary is the one-line report.
func (rep *restoreReport) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "restore %s σ_y %g, %s (%s, %s, %d steps): %d images × %d: PSNR %.2f ± %.2f dB (degraded %.2f), SSIM %.3f ± %.3f",
		rep.Task.Name, rep.SigmaY, rep.Method.Name, rep.Method.Sampler, rep.Method.Grid, rep.Method.Steps, rep.N, rep.K,
		rep.PSNR, rep.PSNRSE, rep.PSNRDegraded, rep.SSIM, rep.SSIMSE)
	if rep.PSNRMeanOfK != nil {
		fmt.Fprintf(&b, ", PSNR of the mean of %d %.2f", rep.K, *rep.PSNRMeanOfK)
	}
	if rep.FDist != nil {
		fmt.Fprintf(&b, ", FDist %.4f ± %.4f, class agreement %.3f ± %.3f", *rep.FDist, *rep.FDistSE, *rep.ClassAgreement, *rep.ClassAgreeSE)
	}
	fmt.Fprintf(&b, ", RMS(Ax − y) %.3g (σ_y %g), NFE %d, VJPs %d, max |x| before clipping %.3g, %.1fs; wrote %s",
		rep.RMSResidual, rep.SigmaY, rep.NFE, rep.VJP, rep.MaxAbsPreclip, rep.WallSeconds, strings.Join(rep.Outputs, ", "))
	return b.String()
}
