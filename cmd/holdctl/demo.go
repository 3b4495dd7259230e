package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/hold"
	"holdgo/internal/clibind"
	"holdgo/internal/devices"
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
	device := c.String("device")
	return inputExit(experiment.RunDemo(experiment.DemoRun{Out: opt.Out, Steps: opt.Steps, L: opt.L, Alpha: opt.Alpha, N: opt.N,
		NFE: opt.NFE, Sampler: opt.Sampler, Seed: opt.Seed, Times: opt.Times, LR: opt.LR, Fourier: opt.Fourier, Force: opt.Force,
		Device: device, Open: devices.Open, Prog: "holdctl",
		Notify: func() (context.Context, func()) {
			ctx, stop := signal.NotifyContext(c.Context, procexit.StopSignals...)
			procexit.OwnSignals()
			return ctx, stop
		},
		Fix: func(err error) error {
			var de *experiment.DeviceError
			if errors.As(err, &de) {
				return usageErr("demo: --device %s: %v", device, de.Err)
			}
			return cliError(err)
		},
		On: func(s *sample.Sampler, m *train.Model) (sample.Func, error) {
			return samplerOn(device, s, m, c.App.ErrWriter)
		},
	}, c.App.Writer, c.App.ErrWriter))
}
