package main

import (
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"holdgo/hold"
)

// exitBadParams is the exit status for invalid parameters.
const exitBadParams = 2

// paramErr is an error of cmd's parameters, "holdctl CMD: …": exit status 2.
func paramErr(cmd, format string, args ...any) error {
	return cli.Exit("holdctl "+cmd+": "+fmt.Sprintf(format, args...), exitBadParams)
}

// sdeCommand prints perturbation-kernel quantities of an SDE:
//
//	holdctl sde --sde hold --order 3 --L 2 --alpha 0.02 --t 0.5 --json
//	holdctl sde --sde hold --L 2 --astep 0.01 --json
//
// sdeOptions are holdctl sde's parameters: a parameter not given keeps the SDE kind's default
// (sdeConfig), every one given is finite.
type sdeOptions struct {
	Order    int     `flag:"order" min:"1" max:"4" help:"blocks per data dimension (hold: 2, 3 or 4)"`
	L        float64 `flag:"L" help:"HOLD prior precision L"`
	Alpha    float64 `flag:"alpha" help:"HOLD α (initial auxiliary variance α/L); CLD γ"`
	Beta     float64 `flag:"beta" help:"HOLD/CLD constant time scale β"`
	MInv     float64 `flag:"m-inv" help:"CLD inverse mass M⁻¹"`
	Friction float64 `flag:"friction" help:"CLD friction Γ"`
	BetaMin  float64 `flag:"beta-min" help:"VP β_min"`
	BetaMax  float64 `flag:"beta-max" help:"VP β_max"`
	SigmaMin float64 `flag:"sigma-min" help:"VE σ_min"`
	SigmaMax float64 `flag:"sigma-max" help:"VE σ_max"`
	Horizon  float64 `flag:"horizon" help:"horizon T"`
	TMin     float64 `flag:"t-min" help:"smallest time t_min"`
	T        float64 `flag:"t" help:"time t in [t_min, T] for the kernel (end time of the A-step)"`
	AStep    float64 `flag:"astep" help:"print the A-step over this step size h instead of the kernel"`
}

func sdeCommand() *cli.Command {
	var opt sdeOptions
	return withConfig(&cli.Command{
		Name:  "sde",
		Usage: "print the exact perturbation kernel (mean, Σ_t, Cholesky factor, ℓ_t) or the sampler's A-step",
		Description: "With --t: the marginal kernel at time t (b0 = {q0}); `mean` holds the coefficients of q0 in μ_t.\n" +
			"With --astep h: the exact A-step over a reverse step from t (default T) to t − h: x ← expA·x + cholA·z.\n" +
			"Parameters not given take the defaults of the SDE kind (HOLD: order 3, L 2, alpha 0.02, T 7;\n" +
			"CLD as CLD-SGM; VP and VE as score_sde). Invalid parameters exit with status 2.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sde", Value: hold.KindHOLD, Usage: "SDE kind: hold, cld, vp or ve"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON with full float64 precision"},
		},
		Action: func(c *cli.Context) error { return runSDE(c, opt) },
	}, &opt)
}

// sdeConfig builds the configuration from the SDE kind's defaults and the flags that were set.
func sdeConfig(c *cli.Context, opt sdeOptions) hold.Config {
	cfg := hold.DefaultConfig(c.String("sde"))
	if c.IsSet("order") {
		cfg.Order = opt.Order
	}
	for name, set := range map[string]struct{ dst, v *float64 }{"L": {&cfg.L, &opt.L}, "alpha": {&cfg.Alpha, &opt.Alpha},
		"beta": {&cfg.Beta, &opt.Beta}, "m-inv": {&cfg.MInv, &opt.MInv}, "friction": {&cfg.Friction, &opt.Friction},
		"beta-min": {&cfg.BetaMin, &opt.BetaMin}, "beta-max": {&cfg.BetaMax, &opt.BetaMax}, "sigma-min": {&cfg.SigmaMin, &opt.SigmaMin},
		"sigma-max": {&cfg.SigmaMax, &opt.SigmaMax}, "horizon": {&cfg.T, &opt.Horizon}, "t-min": {&cfg.TMin, &opt.TMin}} {
		if c.IsSet(name) {
			*set.dst = *set.v
		}
	}
	return cfg
}

func runSDE(c *cli.Context, opt sdeOptions) error {
	out, err := hold.Query{Config: sdeConfig(c, opt), T: opt.T, TSet: c.IsSet("t"), AStep: opt.AStep, AStepSet: c.IsSet("astep")}.Report()
	if err != nil {
		return paramErr("sde", "%v", err)
	}
	if !c.Bool("json") {
		return out.WriteText(c.App.Writer)
	}
	err = out.WriteJSON(c.App.Writer)
	var ve *hold.ValueError
	if errors.As(err, &ve) {
		return cli.Exit(fmt.Sprintf("holdctl sde: %v", ve), 1)
	}
	return err
}
