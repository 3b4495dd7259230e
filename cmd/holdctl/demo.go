package main

import (
	"errors"
	"fmt"
	"os/signal"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/hold"
	"holdgo/internal/clibind"
	"holdgo/internal/outpath"
	"holdgo/internal/procexit"
	"holdgo/sample"
	"holdgo/train"
)

// demoOptions are holdctl demo's settings.
type demoOptions struct {
	Out     string  `flag:"out" help:"output directory (run files, samples.png, samples.npy)"`
	Steps   int     `flag:"steps" min:"1" max:"1073741824" help:"training steps"`
	L       float64 `flag:"L" gt:"0" help:"HOLD prior precision L (the paper's Table 3 varies it)"`
	Alpha   float64 `flag:"alpha" min:"0" help:"HOLD initial auxiliary variance factor α (Table 3)"`
	N       int     `flag:"n" min:"2" max:"16777216" help:"samples drawn and fresh data points compared with"`
	NFE     int     `flag:"nfe" min:"1" max:"1048576" help:"score evaluations of the sampler (the Lie–Trotter sampler's Euler B-step narrows thin structures below ≈500)"` // experiment.MaxNFE
	Sampler string  `flag:"sampler"`
	Seed    uint64  `flag:"seed" help:"random seed"`
	Times   string  `flag:"times"`
	LR      float64 `flag:"lr" gt:"0" help:"Adam learning rate (cosine decay to 0 over --steps)"`
	Fourier int     `flag:"fourier" min:"0" max:"65536" help:"Fourier features of the kernel's estimate x̂₀ that the network sees (0: none; the network still takes x̂₀ itself and log t, and the rate still decays, so 0 is this demo's recipe without features, not the paper's network: that one is holdctl train's defaults)"`
	Force   bool    `flag:"force" help:"replace DIR/samples.png and DIR/samples.npy even if they hold another kind of file"`
}

func demoCommand() *cli.Command {
	hc := hold.DefaultConfig(hold.KindHOLD)
	opt := demoOptions{Out: "demo-out", Steps: train.DemoSteps, L: hc.L, Alpha: hc.Alpha, N: 5000, NFE: 500, Sampler: "lt",
		Times: train.TimesMixed, LR: train.DemoLR, Fourier: train.DemoFourier}
	cmd := withConfig(&cli.Command{
		Name:   "demo",
		Usage:  "the main job: train HOLD on the 2-D multi Swiss roll (CPU), sample (Lie–Trotter unless --sampler), score the samples",
		Flags:  []cli.Flag{deviceFlag()},
		Before: oneProcess("demo"),
		Action: func(c *cli.Context) error { return runDemo(c, opt) },
	}, &opt)
	clibind.SetUsage(cmd, "sampler", "sampler: "+strings.Join(sample.MethodNames(), ", ")+" (x̂₀ and aligned samplers end with the x̂₀ read-out, counted in --nfe)")
	clibind.SetUsage(cmd, "times", fmt.Sprintf("training-time sampling: uniform or mixed (half log-uniform on [%g, T])", train.DemoTimesLogMin))
	return cmd
}

func runDemo(c *cli.Context, opt demoOptions) error {
	spec := experiment.DemoSamplerSpec(opt.Sampler, opt.NFE)
	if _, err := sample.StepsFor(spec.Method, spec.NFE, spec.Denoise); err != nil {
		return usageErr("demo: --sampler/--nfe: %v", err)
	}
	hc := hold.DefaultConfig(hold.KindHOLD)
	hc.L, hc.Alpha = opt.L, opt.Alpha
	if err := hc.Validate(); err != nil { // before anything is written
		return usageErr("demo: %v", err)
	}
	begin := time.Now()
	dir, n := opt.Out, opt.N
	if err := checkBudget("n", int64(n)*3, 2*8*8); err != nil { // the state of every sample, float64, with scratch
		return err
	}
	cfg := train.DemoConfig(opt.Steps, opt.Seed, opt.Times, opt.LR, opt.Fourier, opt.L, opt.Alpha)
	if err := cfg.Validate(); err != nil { // --lr, --times: before the run directory is made
		return usageErr("demo: %v", err)
	}
	png, npy, runDir, lock, err := experiment.DemoDir(dir, outpath.New(opt.Force))
	if err != nil {
		return usageErr("demo: %v", err)
	}
	defer lock.Release()
	fmt.Fprintf(c.App.Writer, "holdctl demo: HOLD-%d (L=%g, α=%g, T=7) on the multi Swiss roll, %d steps, batch %d\n",
		cfg.Order, cfg.L, cfg.Alpha, cfg.Steps, cfg.Batch)
	dev, err := openDevice(c.String("device"))
	if err != nil {
		return usageErr("demo: %v", err)
	}
	ctx, stop := signal.NotifyContext(c.Context, procexit.StopSignals...)
	defer stop()
	procexit.OwnSignals()
	m, err := experiment.TrainDemo(ctx, experiment.DemoTraining{Config: cfg, Device: dev, Prog: "holdctl",
		Session: train.Session{Dir: runDir, Out: c.App.ErrWriter},
		ResumeHint: func(ranks int) string {
			return fmt.Sprintf("holdctl train --resume --out %s --local-ranks %d finishes the training (holdctl demo starts over)", runDir, ranks)
		},
		Fix: func(err error) error {
			var de *experiment.DeviceError
			if errors.As(err, &de) {
				return usageErr("demo: --device %s: %v", c.String("device"), de.Err)
			}
			return cliError(err)
		}})
	if err != nil {
		return err
	}
	trained := time.Since(begin)
	smp, err := spec.Build(m.SDE, m.Score, 2)
	if err != nil {
		return usageErr("demo: %v", err)
	}
	run, err := samplerOn(c.String("device"), smp, m, c.App.ErrWriter)
	if err != nil {
		return err
	}
	q, res, sampled, err := experiment.DemoSample(smp, run, experiment.DemoRanksOn(dev), n, cfg.Seed+1)
	if err != nil {
		return err
	}
	if err := experiment.WriteDemoSamples(png, npy, q, n, fmt.Sprintf("HOLD-3, sampler %s, NFE %d, %d samples", spec.Method, res.NFE, n)); err != nil {
		return err
	}

	sample.WarnDiverged(c.App.ErrWriter, res.Diverged, n, "the picture and the distances below leave them out")
	q, _ = sample.ConvergedRows(q, 2)
	sc, err := experiment.ScoreDemo(q, m.Source, n, cfg.Seed+2)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "sampled %d points with sampler %s (NFE %d) in %.1fs; picture: %s\n", n, spec.Method, res.NFE, sampled.Seconds(), png)
	sc.WriteText(c.App.Writer, len(q)/2, n)
	fmt.Fprintf(c.App.Writer, "time: training %.0fs, total %.0fs\n", trained.Seconds(), time.Since(begin).Seconds())
	return nil
}
