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
	"holdgo/internal/outpath"
	"holdgo/sample"
	"holdgo/train"
)

func demoCommand() *cli.Command {
	return &cli.Command{
		Name:  "demo",
		Usage: "the main job: train HOLD on the 2-D multi Swiss roll (CPU), sample (Lie–Trotter unless --sampler), score the samples",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "out", Value: "demo-out", Usage: "output directory (run files, samples.png, samples.npy)"},
			&cli.IntFlag{Name: "steps", Value: train.DemoSteps, Usage: "training steps"},
			&cli.Float64Flag{Name: "L", Value: hold.DefaultConfig(hold.KindHOLD).L, Usage: "HOLD prior precision L (the paper's Table 3 varies it)"},
			&cli.Float64Flag{Name: "alpha", Value: hold.DefaultConfig(hold.KindHOLD).Alpha, Usage: "HOLD initial auxiliary variance factor α (Table 3)"},
			&cli.IntFlag{Name: "n", Value: 5000, Usage: "samples drawn and fresh data points compared with"},
			&cli.IntFlag{Name: "nfe", Value: 500, Usage: "score evaluations of the sampler (the Lie–Trotter sampler's Euler B-step narrows thin structures below ≈500)"},
			&cli.StringFlag{Name: "sampler", Value: "lt", Usage: "sampler: " + strings.Join(sample.MethodNames(), ", ") + " (x̂₀ and aligned samplers end with the x̂₀ read-out, counted in --nfe)"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "random seed"},
			&cli.StringFlag{Name: "times", Value: train.TimesMixed, Usage: fmt.Sprintf("training-time sampling: uniform or mixed (half log-uniform on [%g, T])", train.DemoTimesLogMin)},
			&cli.Float64Flag{Name: "lr", Value: train.DemoLR, Usage: "Adam learning rate (cosine decay to 0 over --steps)"},
			&cli.IntFlag{Name: "fourier", Value: train.DemoFourier, Usage: "Fourier features of the kernel's estimate x̂₀ that the network sees (0: none; the network still takes x̂₀ itself and log t, " +
				"and the rate still decays, so 0 is this demo's recipe without features, not the paper's network: that one is holdctl train's defaults)"},
			&cli.BoolFlag{Name: "force", Usage: "replace DIR/samples.png and DIR/samples.npy even if they hold another kind of file"},
			deviceFlag(),
		},
		Before: oneProcess("demo"),
		Action: runDemo,
	}
}

func runDemo(c *cli.Context) error {
	spec := experiment.DemoSamplerSpec(c.String("sampler"), c.Int("nfe"))
	if _, err := sample.StepsFor(spec.Method, spec.NFE, spec.Denoise); err != nil {
		return usageErr("demo: --sampler/--nfe: %v", err)
	}
	hc := hold.DefaultConfig(hold.KindHOLD)
	hc.L, hc.Alpha = c.Float64("L"), c.Float64("alpha")
	if err := hc.Validate(); err != nil { // before anything is written
		return usageErr("demo: %v", err)
	}
	begin := time.Now()
	dir, n := c.String("out"), c.Int("n")
	if n < 2 || c.Int("steps") < 1 {
		return usageErr("demo: --n must be ≥ 2 and --steps ≥ 1")
	}
	if err := checkInts(c, intRange{name: "n", lo: 2, hi: 1 << 24}, intRange{name: "steps", lo: 1, hi: 1 << 30},
		intRange{name: "nfe", lo: 1, hi: maxNFE}, intRange{name: "fourier", lo: 0, hi: 1 << 16}); err != nil {
		return err
	}
	if err := checkBudget("n", int64(n)*3, 2*8*8); err != nil { // the state of every sample, float64, with scratch
		return err
	}
	cfg := train.DemoConfig(c.Int("steps"), c.Uint64("seed"), c.String("times"), c.Float64("lr"), c.Int("fourier"), c.Float64("L"), c.Float64("alpha"))
	if err := cfg.Validate(); err != nil { // --lr, --times: before the run directory is made
		return usageErr("demo: %v", err)
	}
	png, npy, runDir, lock, err := experiment.DemoDir(dir, outpath.New(c.Bool("force")))
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
	ctx, stop := signal.NotifyContext(c.Context, stopSignals...)
	defer stop()
	ownSignals()
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

	warnDiverged(c.App.ErrWriter, res.Diverged, n, "the picture and the distances below leave them out")
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
