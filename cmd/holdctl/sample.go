package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/experiment"
	"holdgo/imagedata"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
	"holdgo/layers"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

func samplerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sampler", Value: "lt", Usage: strings.Join(sample.MethodNames(), ", ")},
		&cli.IntFlag{Name: "nfe", Usage: "score evaluations (sets the steps of fixed-step samplers)"},
		&cli.IntFlag{Name: "steps", Value: 150, Usage: "steps of fixed-step samplers (when --nfe is not given)"},
		&cli.StringFlag{Name: "grid", Value: sample.GridQuadratic, Usage: "time grid: " + strings.Join(sample.GridKinds, ", ")},
		&cli.Float64Flag{Name: "eps", Value: 1e-3, Usage: "end time ε of the reverse process (t-grids: uniform, quadratic, geometric, logsnr)"},
		&cli.Float64Flag{Name: "sigma-min", Value: sample.DefaultSigmaMin, Usage: "noise level σ of the sufficient statistic at which the σ-grids (edm, vpmatched, lambda, vplambda) end"},
		&cli.Float64Flag{Name: "clip", Usage: "threshold every x̂₀ to [−clip, clip] (1 for images; 0: off): inside the x̂₀ and aligned samplers, and for the others through the score of the clipped denoiser"},
		&cli.BoolFlag{Name: "denoise", Usage: "final noise-free step at ε (CLD-SGM's denoising; one more evaluation)"},
		&cli.Float64Flag{Name: "tol", Value: 1e-5, Usage: "rtol = atol of the adaptive ODE sampler"},
		&cli.Float64Flag{Name: "eta", Value: 1, Usage: "xanc: 1 the exact Gaussian-posterior step, 0 xddim, in between the DDIM-style blend"},
		&cli.IntFlag{Name: "forward-mib", Usage: "trained networks: memory for one forward pass's activations in MiB, from which the forward batch is chosen (measured on a first pass of 8 samples; 0: passes of 64 samples)"},
	}
}

// forwardMemory applies --forward-mib to a trained model (a usage error outside [0, 2^20]).
func forwardMemory(c *cli.Context, m *train.Model) error {
	mib := c.Int("forward-mib")
	if limit := budget.Limit() >> 20; mib < 0 || int64(mib) > limit {
		return usageErr("--forward-mib must be in [0, %d] (the memory budget, --max-memory), got %d", limit, mib)
	}
	m.SetForwardMemory(int64(mib) << 20)
	return nil
}

// checkSamplerSizes bounds --nfe and --steps of every command with the sampler flags (sample, fid,
// plot trajectory, bench sample) before anything is built: a grid of 10⁹ steps is 8 GB.
func checkSamplerSizes(c *cli.Context) error {
	return checkInts(c, intRange{name: "nfe", lo: 0, hi: maxNFE, note: "0: use --steps"}, intRange{name: "steps", lo: 1, hi: maxNFE})
}

func samplerSpecFrom(c *cli.Context) sample.Spec {
	return sample.Spec{Method: c.String("sampler"), NFE: c.Int("nfe"), Steps: c.Int("steps"), Grid: c.String("grid"),
		End: c.Float64("eps"), SigmaMin: c.Float64("sigma-min"), Clip: c.Float64("clip"), Denoise: c.Bool("denoise"), Tol: c.Float64("tol"), Eta: c.Float64("eta"), EtaSet: true,
		NFESet: c.IsSet("nfe")}
}

// The sampler a trained image network gets when --sampler is not given: the best cell of
// docs/images.md (a-sde2 on the vpmatched grid, NFE 50, the final denoising step).
const (
	imageSampler = "a-sde2"
	imageGrid    = sample.GridVPMatched
	imageNFE     = 50
)

// imageDefaults fills in, for a trained image network (imagedata run or export), the sampler flags the
// user did not set: --clip 1 (x̂₀ thresholded to the data range: without it xdpm2 reaches pixels of
// ±306 on the shipped HOLD-3 model), and with sampler also the measured best sampler when --sampler is
// not given. It says what it chose in one line on w; --clip 0 turns thresholding off.
func imageDefaults(c *cli.Context, m *train.Model, spec *sample.Spec, w io.Writer, sampler bool) {
	if !imagedata.IsSpec(m.Config.Data) {
		return
	}
	var chosen []string
	if sampler && !c.IsSet("sampler") {
		spec.Method = imageSampler
		chosen = append(chosen, "--sampler "+imageSampler)
		if !c.IsSet("grid") {
			spec.Grid = imageGrid
			chosen = append(chosen, "--grid "+imageGrid)
		}
		if !c.IsSet("nfe") && !c.IsSet("steps") {
			spec.NFE = imageNFE
			chosen = append(chosen, fmt.Sprintf("--nfe %d", imageNFE))
		}
		if !c.IsSet("denoise") {
			spec.Denoise = true
			chosen = append(chosen, "--denoise")
		}
	}
	if !c.IsSet("clip") {
		spec.Clip = 1
		chosen = append(chosen, "--clip 1")
	}
	if len(chosen) > 0 {
		fmt.Fprintf(w, "image model: %s (the defaults for images; give a flag to change it, --clip 0 turns thresholding off)\n", strings.Join(chosen, " "))
	}
}

// samplerOn returns the sampling function of --device: Sampler.Sample on the CPU, or
// Sampler.SampleOn with the checkpoint's network moved to the device (the samplers of
// Sampler.OnDevice; the others run on the host with the network on the device, which sampleDevice
// says on w).
func samplerOn(device string, s *sample.Sampler, m *train.Model, w io.Writer) (func(n int, seed uint64) (*sample.Result, error), error) {
	cd, net, err := sampleDevice(device, s, m, w)
	if err != nil || cd == nil {
		return s.Sample, err
	}
	return func(n int, seed uint64) (*sample.Result, error) { return s.SampleOn(cd, net, n, seed) }, nil
}

// eachOn is samplerOn for chunk-by-chunk sampling (Sampler.Each, Sampler.EachOn).
func eachOn(device string, s *sample.Sampler, m *train.Model, w io.Writer) (func(n int, seed uint64, emit func(int, []float64) error) (sample.StreamResult, error), error) {
	cd, net, err := sampleDevice(device, s, m, w)
	if err != nil || cd == nil {
		return s.Each, err
	}
	return func(n int, seed uint64, emit func(int, []float64) error) (sample.StreamResult, error) {
		return s.EachOn(cd, net, n, seed, emit)
	}, nil
}

// sampleDevice opens --device for sampling: nil for the CPU, or the device with the checkpoint's
// network moved onto it (Sampler.DeviceFor). Where the state stays on the host it says why on w
// (Sampler.HostReason): no silent fallback.
func sampleDevice(device string, s *sample.Sampler, m *train.Model, w io.Writer) (tensor.Device, layers.ScoreNet, error) {
	dev, err := openDevice(device)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	cd, net, err := s.DeviceFor(dev, m.Score, device)
	if err != nil {
		return nil, nil, usageErr("%v", err)
	}
	if cd == nil && device != "" && device != "cpu" {
		fmt.Fprintf(w, "note: --device %s evaluates the network there and integrates the state on the host: %s\n", device, s.HostReason(m.Score))
	}
	return cd, net, nil
}

// trainDataFlag re-points a run on .npy points at a copy of them.
func trainDataFlag() cli.Flag {
	return &cli.StringFlag{Name: "train-data", Usage: "a run trained on a .npy file: read its points from this file " +
		"(same content) instead of the copy in the run directory"}
}

// warnDiverged tells the user, when some samples diverged, how many and
// what to try.
func warnDiverged(w io.Writer, diverged, n int, where string) {
	if diverged == 0 {
		return
	}
	fmt.Fprintf(w, "warning: %d of %d samples diverged (NaN, Inf or beyond ±%g: the learned score pushed them off "+
		"where training saw no data); %s. Another sampler (em), more NFE or an earlier checkpoint usually helps.\n",
		diverged, n, sample.DivergedBound, where)
}

func sampleCommand() *cli.Command {
	d := train.DefaultRunConfig()
	return &cli.Command{
		Name:  "sample",
		Usage: "draw samples from a trained checkpoint or from the exact score of mixture data",
		Flags: append(samplerFlags(),
			&cli.StringFlag{Name: "ckpt", Usage: "run directory or checkpoint file of holdctl train"},
			&cli.BoolFlag{Name: "raw-weights", Usage: "use the raw weights instead of the EMA weights"},
			&cli.BoolFlag{Name: "oracle", Usage: "use the exact score of the data (mixture data, --data gmm1d, or the empirical distribution of images)"},
			&cli.StringFlag{Name: "data", Value: data.NameGMM1D, Usage: "data of --oracle: a mixture (gmm1d) or images (fashion-mnist:DIR, mnist:DIR, cifar10:DIR, images:PATH: the empirical distribution of --oracle-n images)"},
			&cli.IntFlag{Name: "oracle-n", Value: 1000, Usage: "images in the empirical oracle of --oracle --data IMAGES"},
			&cli.StringFlag{Name: "sde", Value: d.SDE, Usage: "SDE of --oracle: hold, cld, vp or ve"},
			&cli.IntFlag{Name: "order", Value: d.Order, Usage: "HOLD order of --oracle"},
			&cli.Float64Flag{Name: "L", Value: d.L, Usage: "HOLD L of --oracle"},
			&cli.Float64Flag{Name: "alpha", Value: d.Alpha, Usage: "HOLD α of --oracle"},
			&cli.IntFlag{Name: "n", Value: 10000, Usage: "number of samples"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "random seed"},
			&cli.StringSliceFlag{Name: "out", Value: cli.NewStringSlice("samples.npy"), Usage: "output files: .npy (float32, (n, d)) and/or .png"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
			trainDataFlag(),
			forceFlag(),
			deviceFlag(),
		),
		Before: oneProcess("sample"),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("sample takes no arguments, got %q", c.Args().First())
			}
			if err := setThreads(c); err != nil {
				return err
			}
			var (
				m   *train.Model
				err error
			)
			switch {
			case c.Bool("oracle") && c.IsSet("ckpt"):
				return usageErr("give either --ckpt or --oracle, not both")
			case c.Bool("oracle"):
				cfg := d
				cfg.Data, cfg.SDE, cfg.Order, cfg.L, cfg.Alpha = c.String("data"), c.String("sde"), c.Int("order"), c.Float64("L"), c.Float64("alpha")
				m, err = train.OracleModel(cfg, c.Int("oracle-n"))
			case c.IsSet("ckpt"):
				m, err = train.LoadModel(c.String("ckpt"), c.Bool("raw-weights"), c.String("train-data"))
			default:
				return usageErr("sample needs --ckpt DIR (a trained run) or --oracle (exact score of mixture data)")
			}
			if err != nil {
				return usageErr("%v", err)
			}
			if err := forwardMemory(c, m); err != nil {
				return err
			}
			n, dim := c.Int("n"), m.Source.Dimension()
			if n < 1 || uint64(n) > math.MaxInt64/4/uint64(dim) {
				return usageErr("--n must be ≥ 1 and its samples fit in a file, got %d", n)
			}
			outs := c.StringSlice("out")
			var npys, pics []string
			guard := outpath.New(c.Bool("force"))
			guard.Input(c.String("ckpt"), c.String("train-data"))
			if c.IsSet("ckpt") {
				guard.Input(m.Config.DataPath())
				guardData(guard, m.Config.Data)
			} else {
				guardData(guard, c.String("data"))
			}
			for _, o := range outs {
				ext := filepath.Ext(o)
				if ext != ".npy" && ext != ".png" {
					return usageErr("--out %s: want a .npy or .png file", o)
				}
				if err := checkWritableDir(o); err != nil {
					return usageErr("--out %s: %v", o, err)
				}
				if st, err := os.Stat(o); err == nil && !st.Mode().IsRegular() {
					return usageErr("--out %s is a directory or another non-file; give a file name ending .npy or .png", o)
				}
				if ext == ".npy" {
					if err := outpath.CheckSpace(o, uint64(n)*uint64(dim)*4+128); err != nil {
						return usageErr("--out: %v", strings.TrimPrefix(err.Error(), outpath.ErrRefused.Error()+": "))
					}
					npys = append(npys, o)
				} else {
					pics = append(pics, o)
				}
			}
			var targets []output
			for _, o := range outs {
				targets = append(targets, output{"out", o, outpath.KindByExt(o)})
			}
			if err := checkOutputs(guard, targets...); err != nil {
				return err
			}
			if len(pics) > 0 && uint64(n)*uint64(dim) > maxPictureValues {
				return usageErr("--n %d: a picture needs all %d×%d values in memory (at most %d); write .npy only "+
					"(streamed, any --n), or picture a smaller --n", n, n, dim, maxPictureValues)
			}
			if nfe, steps, tol := c.Int("nfe"), c.Int("steps"), c.Float64("tol"); nfe < 0 || steps < 1 || !(tol > 0 && tol < 1) {
				return usageErr("--nfe %d must be ≥ 0 (0: use --steps), --steps %d ≥ 1 and --tol %g in (0, 1)", nfe, steps, tol)
			}
			if err := checkInts(c, intRange{name: "nfe", lo: 0, hi: maxNFE, note: "0: use --steps"}, intRange{name: "steps", lo: 1, hi: maxNFE}); err != nil {
				return err
			}
			spec := samplerSpecFrom(c)
			if c.IsSet("ckpt") {
				imageDefaults(c, m, &spec, c.App.Writer, true)
			}
			s, err := spec.Build(m.SDE, m.Score, dim)
			if err != nil {
				return usageErr("%v", err)
			}
			each, err := eachOn(c.String("device"), s, m, c.App.ErrWriter)
			if err != nil {
				return err
			}
			start := time.Now()
			res, err := experiment.SampleFiles(m, s.Method.Name(), each, n, c.Uint64("seed"), npys, pics)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "%d samples, sampler %s, NFE %d, %.2fs; wrote %s\n", n, s.Method.Name(), res.NFE,
				time.Since(start).Seconds(), strings.Join(outs, ", "))
			warnDiverged(c.App.ErrWriter, res.Diverged, n, "a .npy keeps them as they are, a picture leaves them out")
			return nil
		},
	}
}

// maxPictureValues bounds the samples a picture (.png) holds in memory: 2²⁷ values, 512 MiB of float32.
const maxPictureValues = 1 << 27

// checkWritableDir reports an output path whose directory is missing.
func checkWritableDir(path string) error {
	st, err := os.Stat(filepath.Dir(path))
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", filepath.Dir(path))
	}
	return nil
}
