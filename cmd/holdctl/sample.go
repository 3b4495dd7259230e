package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/experiment"
	"holdgo/imagedata"
	"holdgo/internal/clibind"
	"holdgo/internal/outpath"
	"holdgo/sample"
	"holdgo/train"
)

// samplerOptions are the sampler's settings of every command that samples a trained or oracle model
// (sample, fid, plot trajectory, bench sample, serve): embedded in each command's options.
type samplerOptions struct {
	Sampler    string  `flag:"sampler"`                                                                                                          // help: sampleHelp
	NFE        int     `flag:"nfe" min:"0" max:"1048576" note:"0: use --steps" help:"score evaluations (sets the steps of fixed-step samplers)"` // maxNFE
	Steps      int     `flag:"steps" min:"1" max:"1048576" help:"steps of fixed-step samplers (when --nfe is not given)"`
	Grid       string  `flag:"grid"`
	Eps        float64 `flag:"eps" gt:"0" note:"below the horizon T" help:"end time ε of the reverse process (t-grids: uniform, quadratic, geometric, logsnr)"`
	SigmaMin   float64 `flag:"sigma-min" min:"0" note:"0: the default" help:"noise level σ of the sufficient statistic at which the σ-grids (edm, vpmatched, lambda, vplambda) end"`
	Clip       float64 `flag:"clip" min:"0" note:"0: off" help:"threshold every x̂₀ to [−clip, clip] (1 for images; 0: off): inside the x̂₀ and aligned samplers, and for the others through the score of the clipped denoiser"`
	Denoise    bool    `flag:"denoise" help:"final noise-free step at ε (CLD-SGM's denoising; one more evaluation)"`
	Tol        float64 `flag:"tol" gt:"0" lt:"1" help:"rtol = atol of the adaptive ODE sampler"`
	Eta        float64 `flag:"eta" min:"0" max:"1" help:"xanc: 1 the exact Gaussian-posterior step, 0 xddim, in between the DDIM-style blend"`
	ForwardMiB int     `flag:"forward-mib" min:"0" max:"1048576" note:"at most the memory budget" help:"trained networks: memory for one forward pass's activations in MiB, from which the forward batch is chosen (measured on a first pass of 8 samples; 0: passes of 64 samples)"`
}

// defaultSampler is samplerOptions' defaults: sample.DefaultSpec.
func defaultSampler() samplerOptions {
	d := sample.DefaultSpec()
	return samplerOptions{Sampler: d.Method, NFE: d.NFE, Steps: d.Steps, Grid: d.Grid, Eps: d.End, SigmaMin: d.SigmaMin,
		Clip: d.Clip, Denoise: d.Denoise, Tol: d.Tol, Eta: d.Eta}
}

// sampleHelp gives the sampler flags of cmd their computed help texts (the lists of names) and
// returns cmd.
func sampleHelp(cmd *cli.Command) *cli.Command {
	clibind.SetUsage(cmd, "sampler", strings.Join(sample.MethodNames(), ", "))
	clibind.SetUsage(cmd, "grid", "time grid: "+strings.Join(sample.GridKinds, ", "))
	return cmd
}

// spec is the sampler the flags describe (isSet tells which were given: a cli.Context's IsSet).
func (o samplerOptions) spec(isSet func(string) bool) sample.Spec {
	return sample.Spec{Method: o.Sampler, NFE: o.NFE, Steps: o.Steps, Grid: o.Grid, End: o.Eps, SigmaMin: o.SigmaMin,
		Clip: o.Clip, Denoise: o.Denoise, Tol: o.Tol, Eta: o.Eta, EtaSet: true, NFESet: isSet("nfe")}
}

// noFlags is the IsSet of a command given no flag.
func noFlags(string) bool { return false }

// imageDefaults fills in, for a trained image network (imagedata run or export), the sampler flags the
// user did not set (sample.Spec.ImageDefaults: --clip 1, and with sampler the measured best sampler)
// and says what it chose in one line on w; --clip 0 turns thresholding off.
func imageDefaults(isSet func(string) bool, m *train.Model, spec *sample.Spec, w io.Writer, sampler bool) {
	if !imagedata.IsSpec(m.Config.Data) {
		return
	}
	if chosen := spec.ImageDefaults(isSet, sampler); len(chosen) > 0 {
		fmt.Fprintf(w, "image model: %s (the defaults for images; give a flag to change it, --clip 0 turns thresholding off)\n", strings.Join(chosen, " "))
	}
}

// samplerOn opens --device and returns its sampling function for the model (Sampler.On); errors
// are the user's (exit status 2).
func samplerOn(device string, s *sample.Sampler, m *train.Model, w io.Writer) (sample.Func, error) {
	dev, err := openDevice(device)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	run, err := s.On(dev, device, m.Score, w)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return run, nil
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

// sampleOptions are holdctl sample's settings.
type sampleOptions struct {
	samplerOptions
	Ckpt       string   `flag:"ckpt" help:"run directory or checkpoint file of holdctl train"`
	RawWeights bool     `flag:"raw-weights" help:"use the raw weights instead of the EMA weights"`
	Oracle     bool     `flag:"oracle" help:"use the exact score of the data (mixture data, --data gmm1d, or the empirical distribution of images)"`
	Data       string   `flag:"data" help:"data of --oracle: a mixture (gmm1d) or images (fashion-mnist:DIR, mnist:DIR, cifar10:DIR, images:PATH: the empirical distribution of --oracle-n images)"`
	OracleN    int      `flag:"oracle-n" min:"1" max:"1048576" help:"images in the empirical oracle of --oracle --data IMAGES"`
	SDE        string   `flag:"sde" help:"SDE of --oracle: hold, cld, vp or ve"`
	Order      int      `flag:"order" min:"1" max:"4" note:"HOLD: 2, 3 or 4" help:"HOLD order of --oracle"`
	L          float64  `flag:"L" gt:"0" help:"HOLD L of --oracle"`
	Alpha      float64  `flag:"alpha" min:"0" help:"HOLD α of --oracle"`
	N          int      `flag:"n" min:"1" max:"2e18" note:"and its samples fit in a file" help:"number of samples"`
	Seed       uint64   `flag:"seed" help:"random seed"`
	Out        []string `flag:"out" help:"output files: .npy (float32, (n, d)) and/or .png"`
	threadsOption
}

func sampleCommand() *cli.Command {
	d := train.DefaultRunConfig()
	opt := sampleOptions{samplerOptions: defaultSampler(), Data: data.NameGMM1D, OracleN: 1000, SDE: d.SDE, Order: d.Order, L: d.L,
		Alpha: d.Alpha, N: 10000, Out: []string{"samples.npy"}}
	return sampleHelp(withConfig(&cli.Command{
		Name:   "sample",
		Usage:  "draw samples from a trained checkpoint or from the exact score of mixture data",
		Flags:  []cli.Flag{trainDataFlag(), forceFlag(), deviceFlag()},
		Before: oneProcess("sample"),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("sample takes no arguments, got %q", c.Args().First())
			}
			opt.apply()
			var (
				m   *train.Model
				err error
			)
			switch {
			case opt.Oracle && c.IsSet("ckpt"):
				return usageErr("give either --ckpt or --oracle, not both")
			case opt.Oracle:
				cfg := d
				cfg.Data, cfg.SDE, cfg.Order, cfg.L, cfg.Alpha = opt.Data, opt.SDE, opt.Order, opt.L, opt.Alpha
				m, err = train.OracleModel(cfg, opt.OracleN)
			case c.IsSet("ckpt"):
				m, err = train.LoadModel(opt.Ckpt, opt.RawWeights, c.String("train-data"))
			default:
				return usageErr("sample needs --ckpt DIR (a trained run) or --oracle (exact score of mixture data)")
			}
			if err != nil {
				return usageErr("%v", err)
			}
			if err := m.SetForwardMiB(opt.ForwardMiB); err != nil {
				return usageErr("%v", err)
			}
			n, dim := opt.N, m.Source.Dimension()
			if n < 1 || uint64(n) > math.MaxInt64/4/uint64(dim) {
				return usageErr("--n must be ≥ 1 and its samples fit in a file, got %d", n)
			}
			outs := opt.Out
			var npys, pics []string
			guard := outpath.New(c.Bool("force"))
			guard.Input(opt.Ckpt, c.String("train-data"))
			if c.IsSet("ckpt") {
				guard.Input(m.Config.DataPath())
				guard.Data(m.Config.Data)
			} else {
				guard.Data(opt.Data)
			}
			var targets []output
			for _, o := range outs {
				picture, err := outpath.CheckSamples("out", o, uint64(n)*uint64(dim)*4+128, true)
				if err != nil {
					return usageErr("%v", err)
				}
				if picture {
					pics = append(pics, o)
				} else {
					npys = append(npys, o)
				}
				targets = append(targets, output{"out", o, outpath.KindByExt(o)})
			}
			if err := checkOutputs(guard, targets...); err != nil {
				return err
			}
			if len(pics) > 0 && uint64(n)*uint64(dim) > outpath.MaxPictureValues {
				return usageErr("--n %d: a picture needs all %d×%d values in memory (at most %d); write .npy only "+
					"(streamed, any --n), or picture a smaller --n", n, n, dim, outpath.MaxPictureValues)
			}
			spec := opt.spec(c.IsSet)
			if c.IsSet("ckpt") {
				imageDefaults(c.IsSet, m, &spec, c.App.Writer, true)
			}
			s, err := spec.Build(m.SDE, m.Score, dim)
			if err != nil {
				return usageErr("%v", err)
			}
			dev, err := openDevice(c.String("device"))
			if err != nil {
				return usageErr("%v", err)
			}
			each, err := s.EachOnDevice(dev, c.String("device"), m.Score, c.App.ErrWriter)
			if err != nil {
				return usageErr("%v", err)
			}
			start := time.Now()
			res, err := experiment.SampleFiles(m, s.Method.Name(), each, n, opt.Seed, npys, pics)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.App.Writer, "%d samples, sampler %s, NFE %d, %.2fs; wrote %s\n", n, s.Method.Name(), res.NFE,
				time.Since(start).Seconds(), strings.Join(outs, ", "))
			warnDiverged(c.App.ErrWriter, res.Diverged, n, "a .npy keeps them as they are, a picture leaves them out")
			return nil
		},
	}, &opt))
}
