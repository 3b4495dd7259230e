package main

import (
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/hold"
	"holdgo/sample"
)

// plotCommand draws the paper's figures:
//
//	holdctl plot flow --out fig1.png      # Figure 1: density over time and probability-flow paths, VP/CLD/HOLD
//	holdctl plot blocks --out fig4.png    # Figure 4: HOLD's q, p and s over the generation path
//	holdctl plot moments --out fig5.png   # Figure 5: 2-D samples at six moments, CLD and HOLD
func plotCommand() *cli.Command {
	flow := plotFlowOptions{Paths: 30, Tol: 1e-5}
	blocks := plotBlocksOptions{Steps: 500, Order: 3, Paths: 20}
	moments := plotMomentsOptions{Steps: 1000, N: 2000}
	return &cli.Command{
		Name:  "plot",
		Usage: "draw the paper's figures (1: flow, 4: blocks, 5: moments) as PNG",
		Subcommands: []*cli.Command{
			withConfig(&cli.Command{
				Name: "flow", Aliases: []string{"fig1"},
				Usage: "Figure 1: the 1-D marginal density over time with probability-flow ODE paths, for VP, CLD and HOLD",
				Description: "Exact oracle score of the paper's 1-D mixture. The heat map is the closed-form density of the\n" +
					"forward-diffused mixture (the kernel applied to each component), each time's column scaled to\n" +
					"its maximum; the white curves are probability-flow ODE paths (adaptive RK45) from prior draws.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Value: "fig1-flow.png", Usage: "output .png"},
					&cli.StringSliceFlag{Name: "sdes", Value: cli.NewStringSlice(hold.KindVP, hold.KindCLD, hold.KindHOLD), Usage: "panels: vp, cld, hold"},
					forceFlag(),
				},
				Action: func(c *cli.Context) error { return runPlotFlow(c, flow) },
			}, &flow),
			withConfig(&cli.Command{
				Name: "blocks", Aliases: []string{"fig4"},
				Usage: "Figure 4: HOLD's position q, velocity p and acceleration s over time, density and generation paths",
				Description: "Exact oracle score of the paper's 1-D mixture. One panel per block: its closed-form marginal\n" +
					"density over time and the paths of that block recorded along the reverse process (sampler\n" +
					"--sampler, default Lie–Trotter; 'ode' for the probability-flow ODE): q white, p yellow, s green.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Value: "fig4-blocks.png", Usage: "output .png"},
					&cli.StringFlag{Name: "sampler", Value: "lt", Usage: strings.Join(sample.MethodNames(), ", ")},
					forceFlag(),
				},
				Action: func(c *cli.Context) error { return runPlotBlocks(c, blocks) },
			}, &blocks),
			plotNFECommand(),
			plotTrajectoryCommand(),
			plotLossCommand(),
			withConfig(&cli.Command{
				Name: "moments", Aliases: []string{"fig5"},
				Usage: "Figure 5: 2-D samples at six moments (steps) of the generation path, CLD and HOLD",
				Description: "With --cld and --hold (run directories of holdctl train on 2-D data) the trained networks are\n" +
					"sampled; a row without a checkpoint uses the exact oracle score of a 2-D Gaussian mixture laid\n" +
					"along the paper's five Swiss rolls (each panel's title says which). CLD uses SSCS, HOLD\n" +
					"Lie–Trotter, on the same grid; the six moments are evenly spaced steps from 0 to --steps.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Value: "fig5-moments.png", Usage: "output .png"},
					&cli.StringFlag{Name: "cld", Usage: "CLD checkpoint (run directory) on 2-D data; default: oracle"},
					&cli.StringFlag{Name: "hold", Usage: "HOLD checkpoint (run directory) on 2-D data; default: oracle"},
					&cli.StringFlag{Name: "grid", Value: sample.GridQuadratic, Usage: "time grid: uniform, quadratic or geometric"},
					forceFlag(),
				},
				Action: func(c *cli.Context) error { return runPlotMoments(c, moments) },
			}, &moments),
		},
	}
}

// The numeric settings of plot flow, blocks and moments. The upper bounds of the sizes: a figure of
// more than 10,000 paths or 2^20 steps is unreadable, and the paths are kept in memory.
type (
	plotFlowOptions struct {
		Paths int     `flag:"paths" min:"1" max:"10000" help:"ODE paths per panel"`
		Tol   float64 `flag:"tol" gt:"0" lt:"1" help:"rtol = atol of the ODE paths"`
		Seed  uint64  `flag:"seed" help:"seed of the paths' prior draws"`
	}
	plotBlocksOptions struct {
		Steps int    `flag:"steps" min:"1" max:"1048576" help:"steps of fixed-step samplers"`
		Order int    `flag:"order" min:"2" max:"4" help:"HOLD order (2, 3 or 4)"`
		Paths int    `flag:"paths" min:"1" max:"10000" help:"paths per panel"`
		Seed  uint64 `flag:"seed" help:"seed"`
	}
	plotMomentsOptions struct {
		Steps int    `flag:"steps" min:"5" max:"1048576" help:"sampler steps"`
		N     int    `flag:"n" min:"1" max:"16777216" help:"samples"`
		Seed  uint64 `flag:"seed" help:"seed"`
	}
)

func runPlotFlow(c *cli.Context, opt plotFlowOptions) error {
	return inputExit(experiment.RunFlow(experiment.FlowRun{FigureRun: figureRun(c, opt.Seed), SDEs: c.StringSlice("sdes"),
		Paths: opt.Paths, Tol: opt.Tol}, c.App.Writer))
}

func runPlotBlocks(c *cli.Context, opt plotBlocksOptions) error {
	return inputExit(experiment.RunBlocks(experiment.BlocksRun{FigureRun: figureRun(c, opt.Seed), Sampler: c.String("sampler"),
		Steps: opt.Steps, Order: opt.Order, Paths: opt.Paths}, c.App.Writer))
}

func runPlotMoments(c *cli.Context, opt plotMomentsOptions) error {
	return inputExit(experiment.RunMoments(experiment.MomentsRun{FigureRun: figureRun(c, opt.Seed), CLD: c.String("cld"),
		HOLD: c.String("hold"), Grid: c.String("grid"), Steps: opt.Steps, N: opt.N}, c.App.Writer))
}

// figureRun is a figure's --out, --force and seed.
func figureRun(c *cli.Context, seed uint64) experiment.FigureRun {
	return experiment.FigureRun{Out: c.String("out"), Force: c.Bool("force"), Seed: seed}
}
