package main

// holdctl restore: image restoration with a trained image model (issue 46; the specification's §3):
// inpainting, super-resolution, deblurring and denoising by package restore's methods in the aligned
// gauge, measured by PSNR, SSIM, the residual of the measurement and, with --features, the shipped
// classifier's feature distance and class agreement.

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"holdgo/internal/parallel"
	"holdgo/restore"
)

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
	parallel.ThreadsOption
	ForwardMiB int `flag:"forward-mib" min:"0" max:"1048576" note:"at most the memory budget" help:"memory for one forward pass's activations in MiB (0: passes of 64 samples)"`
}

// defaultRestoreNumbers are restoreNumbers' defaults (restore.DefaultParams), n images.
func defaultRestoreNumbers(n int) restoreNumbers {
	d := restore.DefaultParams()
	return restoreNumbers{Box: d.Task.Box, Drop: d.Task.Drop, BlurSigma: d.Task.BlurSigma, Noise: d.Task.Noise, Resample: d.Resample,
		Jump: d.Jump, Eta: d.Eta, DPSScale: d.DPSScale, PiGDMVar: d.PiGDMVar, SigmaMin: d.SigmaMin, Clip: d.Clip, First: d.First,
		N: n, K: d.K, Seed: d.Seed}
}

// restoreOptions are holdctl restore's numeric settings.
type restoreOptions struct {
	restoreNumbers
	NFE int `flag:"nfe" min:"2" max:"1048576" note:"the read-out is one" help:"forward passes per sample, the read-out and RePaint's resampling included"` // experiment.MaxNFE
}

func restoreCommand() *cli.Command {
	d := restore.DefaultParams()
	opt := restoreOptions{restoreNumbers: defaultRestoreNumbers(d.N), NFE: d.NFE}
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
			&cli.StringFlag{Name: "box-pos", Value: d.Task.BoxPos, Usage: "inpaint-box: center or random (per image)"},
			&cli.StringFlag{Name: "method", Usage: "replace, repaint, ddnm, pigdm or dps (default ddnm; for denoise none: the exact start at σ = σ_y)"},
			&cli.StringFlag{Name: "sampler", Usage: "a-ddnm (ddnm only), a-anc, a-ddim or a-sde2 (not with repaint); default a-ddnm for ddnm, a-anc for replace and repaint, a-sde2 otherwise"},
			&cli.StringFlag{Name: "grid", Value: d.Grid, Usage: "σ-grid: edm, vpmatched, lambda or vplambda"},
			&cli.StringFlag{Name: "in", Usage: "images to degrade: a data set (fashion-mnist:DIR#test, idx:FILE, images:DIR, …) or a .npy of (n, C·H·W) values in [−1, 1]"},
			&cli.StringSliceFlag{Name: "out", Value: cli.NewStringSlice(d.Outs...), Usage: "outputs: .npy (float32, (n·K, C·H·W), image-major) and/or .png (the grid)"},
			&cli.StringFlag{Name: "features", Usage: "classifier checkpoint (models/fmnist-classifier.safetensors): report the feature distance and class agreement"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			forceFlag(),
		},
		Before: oneProcess("restore"),
		Action: func(c *cli.Context) error { return runRestore(c, opt) },
	}, &opt)
}

func runRestore(c *cli.Context, o restoreOptions) error {
	o.Apply()
	return restoreErr(restore.RunJob(restore.JobRun{Params: restore.Params{Ckpt: c.String("ckpt"), RawWeights: c.Bool("raw-weights"),
		Task: restore.Task{Name: c.String("task"), Box: o.Box, BoxPos: c.String("box-pos"), Drop: o.Drop,
			BlurSigma: o.BlurSigma, Noise: o.Noise},
		Method: c.String("method"), Eta: o.Eta, Resample: o.Resample, Jump: o.Jump,
		DPSScale: o.DPSScale, PiGDMVar: o.PiGDMVar, Clip: o.Clip,
		Sampler: c.String("sampler"), Grid: c.String("grid"), NFE: o.NFE, SigmaMin: o.SigmaMin,
		In: c.String("in"), First: o.First, N: o.N, K: o.K, Seed: o.Seed,
		Outs: c.StringSlice("out")},
		Features: c.String("features"), ForwardMiB: o.ForwardMiB, Force: c.Bool("force"), JSON: c.Bool("json"), Version: version,
	}, c.App.Writer, c.App.ErrWriter))
}

// restoreErr is a restoration job's error: one of its settings or inputs (restore.InputError) exits
// with status 2, another with 1; the restoration's and its files' (restore.RunError) as they are,
// others after "holdctl: ".
func restoreErr(err error) error {
	if err == nil {
		return nil
	}
	var re *restore.RunError
	if errors.As(err, &re) {
		return re.Err
	}
	var ie *restore.InputError
	if errors.As(err, &ie) {
		return usageErr("%v", ie)
	}
	return fmt.Errorf("holdctl: %w", err)
}
