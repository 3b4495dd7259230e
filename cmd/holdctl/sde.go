package main

import (
	"errors"
	"fmt"
	"math"

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
func sdeCommand() *cli.Command {
	return &cli.Command{
		Name:  "sde",
		Usage: "print the exact perturbation kernel (mean, Σ_t, Cholesky factor, ℓ_t) or the sampler's A-step",
		Description: "With --t: the marginal kernel at time t (b0 = {q0}); `mean` holds the coefficients of q0 in μ_t.\n" +
			"With --astep h: the exact A-step over a reverse step from t (default T) to t − h: x ← expA·x + cholA·z.\n" +
			"Parameters not given take the defaults of the SDE kind (HOLD: order 3, L 2, alpha 0.02, T 7;\n" +
			"CLD as CLD-SGM; VP and VE as score_sde). Invalid parameters exit with status 2.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "sde", Value: hold.KindHOLD, Usage: "SDE kind: hold, cld, vp or ve"},
			&cli.IntFlag{Name: "order", Usage: "blocks per data dimension (hold: 2, 3 or 4)"},
			&cli.Float64Flag{Name: "L", Usage: "HOLD prior precision L"},
			&cli.Float64Flag{Name: "alpha", Usage: "HOLD α (initial auxiliary variance α/L); CLD γ"},
			&cli.Float64Flag{Name: "beta", Usage: "HOLD/CLD constant time scale β"},
			&cli.Float64Flag{Name: "m-inv", Usage: "CLD inverse mass M⁻¹"},
			&cli.Float64Flag{Name: "friction", Usage: "CLD friction Γ"},
			&cli.Float64Flag{Name: "beta-min", Usage: "VP β_min"},
			&cli.Float64Flag{Name: "beta-max", Usage: "VP β_max"},
			&cli.Float64Flag{Name: "sigma-min", Usage: "VE σ_min"},
			&cli.Float64Flag{Name: "sigma-max", Usage: "VE σ_max"},
			&cli.Float64Flag{Name: "horizon", Usage: "horizon T"},
			&cli.Float64Flag{Name: "t-min", Usage: "smallest time t_min"},
			&cli.Float64Flag{Name: "t", Usage: "time t in [t_min, T] for the kernel (end time of the A-step)"},
			&cli.Float64Flag{Name: "astep", Usage: "print the A-step over this step size h instead of the kernel"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON with full float64 precision"},
		},
		Action: runSDE,
	}
}

// sdeConfig builds the configuration from the SDE kind's defaults and the flags that were set.
func sdeConfig(c *cli.Context) hold.Config {
	cfg := hold.DefaultConfig(c.String("sde"))
	if c.IsSet("order") {
		cfg.Order = c.Int("order")
	}
	for name, dst := range map[string]*float64{"L": &cfg.L, "alpha": &cfg.Alpha, "beta": &cfg.Beta, "m-inv": &cfg.MInv,
		"friction": &cfg.Friction, "beta-min": &cfg.BetaMin, "beta-max": &cfg.BetaMax, "sigma-min": &cfg.SigmaMin,
		"sigma-max": &cfg.SigmaMax, "horizon": &cfg.T, "t-min": &cfg.TMin} {
		if c.IsSet(name) {
			*dst = c.Float64(name)
		}
	}
	return cfg
}

func runSDE(c *cli.Context) error {
	for _, f := range c.Command.Flags { // a flag this SDE kind does not read is still no NaN
		if ff, ok := f.(*cli.Float64Flag); ok && c.IsSet(ff.Name) {
			if v := c.Float64(ff.Name); math.IsNaN(v) || math.IsInf(v, 0) {
				return paramErr("sde", "--%s %v: want a finite number", ff.Name, v)
			}
		}
	}
	cfg := sdeConfig(c)
	sde, err := hold.New(cfg)
	if err != nil {
		return paramErr("sde", "%v", err)
	}
	t := cfg.T
	if c.IsSet("t") {
		t = c.Float64("t")
		if err := sde.CheckTime(t); err != nil {
			return paramErr("sde", "%v", err)
		}
	}
	var out hold.Report
	switch {
	case c.IsSet("astep"):
		if out, err = sde.AStepReport(t, c.Float64("astep")); err != nil {
			return paramErr("sde", "%v", err)
		}
	case c.IsSet("t"):
		out = sde.KernelReport(t)
	default:
		return paramErr("sde", "give --t (kernel at time t) or --astep (A-step size h)")
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
