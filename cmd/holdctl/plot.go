package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/hold"
	"holdgo/internal/outpath"
	"holdgo/sample"
)

// plotCommand draws the paper's figures:
//
//	holdctl plot flow --out fig1.png      # Figure 1: density over time and probability-flow paths, VP/CLD/HOLD
//	holdctl plot blocks --out fig4.png    # Figure 4: HOLD's q, p and s over the generation path
//	holdctl plot moments --out fig5.png   # Figure 5: 2-D samples at six moments, CLD and HOLD
func plotCommand() *cli.Command {
	return &cli.Command{
		Name:  "plot",
		Usage: "draw the paper's figures (1: flow, 4: blocks, 5: moments) as PNG",
		Subcommands: []*cli.Command{
			{
				Name: "flow", Aliases: []string{"fig1"},
				Usage: "Figure 1: the 1-D marginal density over time with probability-flow ODE paths, for VP, CLD and HOLD",
				Description: "Exact oracle score of the paper's 1-D mixture. The heat map is the closed-form density of the\n" +
					"forward-diffused mixture (the kernel applied to each component), each time's column scaled to\n" +
					"its maximum; the white curves are probability-flow ODE paths (adaptive RK45) from prior draws.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Value: "fig1-flow.png", Usage: "output .png"},
					&cli.StringSliceFlag{Name: "sdes", Value: cli.NewStringSlice(hold.KindVP, hold.KindCLD, hold.KindHOLD), Usage: "panels: vp, cld, hold"},
					&cli.IntFlag{Name: "paths", Value: 30, Usage: "ODE paths per panel"},
					&cli.Float64Flag{Name: "tol", Value: 1e-5, Usage: "rtol = atol of the ODE paths"},
					&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed of the paths' prior draws"},
					forceFlag(),
				},
				Action: runPlotFlow,
			},
			{
				Name: "blocks", Aliases: []string{"fig4"},
				Usage: "Figure 4: HOLD's position q, velocity p and acceleration s over time, density and generation paths",
				Description: "Exact oracle score of the paper's 1-D mixture. One panel per block: its closed-form marginal\n" +
					"density over time and the paths of that block recorded along the reverse process (sampler\n" +
					"--sampler, default Lie–Trotter; 'ode' for the probability-flow ODE): q white, p yellow, s green.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "out", Value: "fig4-blocks.png", Usage: "output .png"},
					&cli.StringFlag{Name: "sampler", Value: "lt", Usage: strings.Join(sample.MethodNames(), ", ")},
					&cli.IntFlag{Name: "steps", Value: 500, Usage: "steps of fixed-step samplers"},
					&cli.IntFlag{Name: "order", Value: 3, Usage: "HOLD order (2, 3 or 4)"},
					&cli.IntFlag{Name: "paths", Value: 20, Usage: "paths per panel"},
					&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed"},
					forceFlag(),
				},
				Action: runPlotBlocks,
			},
			plotNFECommand(),
			plotTrajectoryCommand(),
			plotLossCommand(),
			{
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
					&cli.IntFlag{Name: "steps", Value: 1000, Usage: "sampler steps"},
					&cli.StringFlag{Name: "grid", Value: sample.GridQuadratic, Usage: "time grid: uniform, quadratic or geometric"},
					&cli.IntFlag{Name: "n", Value: 2000, Usage: "samples"},
					&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "seed"},
					forceFlag(),
				},
				Action: runPlotMoments,
			},
		},
	}
}

// checkPNGOut validates an output picture path before any work is done,
// through the output guard (no input of the command, no run's file, a PNG
// or, with force, another kind of file replaced).
func checkPNGOut(force bool, flag, path string, inputs ...string) error {
	if filepath.Ext(path) != ".png" {
		return usageErr("--%s %s: want a .png file", flag, path)
	}
	if err := checkWritableDir(path); err != nil {
		return usageErr("--%s %s: %v", flag, path, err)
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return usageErr("--%s %s is a directory", flag, path)
	}
	g := outpath.New(force)
	g.Input(inputs...)
	return checkOutputs(g, output{flag, path, outpath.PNG})
}

// Upper bounds of the plot sizes: a figure of more paths or steps is
// unreadable, and the paths are kept in memory.
const (
	maxPlotPaths = 10000
	maxPlotSteps = 1 << 20
)

func runPlotFlow(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOut(c.Bool("force"), "out", out); err != nil {
		return err
	}
	kinds := c.StringSlice("sdes")
	for _, k := range kinds {
		if k != hold.KindVP && k != hold.KindCLD && k != hold.KindHOLD {
			return usageErr("plot flow: unknown --sdes value %q (want vp, cld or hold)", k)
		}
	}
	if len(kinds) == 0 || c.Int("paths") < 1 || !(c.Float64("tol") > 0 && c.Float64("tol") < 1) {
		return usageErr("plot flow: want at least one SDE (--sdes), --paths ≥ 1 and --tol in (0, 1); got --paths %d --tol %g", c.Int("paths"), c.Float64("tol"))
	}
	if err := checkInts(c, intRange{name: "paths", lo: 1, hi: maxPlotPaths}); err != nil {
		return err
	}
	if err := experiment.FlowFigure(out, kinds, c.Int("paths"), c.Float64("tol"), c.Uint64("seed")); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s (%s; exact oracle score of the paper's 1-D mixture)\n", out, strings.Join(kinds, ", "))
	return nil
}

func runPlotBlocks(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOut(c.Bool("force"), "out", out); err != nil {
		return err
	}
	if c.Int("paths") < 1 || c.Int("steps") < 1 {
		return usageErr("plot blocks: --paths and --steps must be ≥ 1, got --paths %d --steps %d", c.Int("paths"), c.Int("steps"))
	}
	if err := checkInts(c, intRange{name: "paths", lo: 1, hi: maxPlotPaths}, intRange{name: "steps", lo: 1, hi: maxPlotSteps}); err != nil {
		return err
	}
	m, spec, err := experiment.BlocksModel(c.String("sampler"), c.Int("steps"), c.Int("order"))
	if err != nil {
		return usageErr("plot blocks: %v", err)
	}
	if err := experiment.BlocksFigure(out, m, spec, c.Int("paths"), c.Uint64("seed")); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s (HOLD-%d, %s sampler; exact oracle score of the paper's 1-D mixture)\n", out, m.SDE.Blocks(), spec.Method)
	return nil
}

func runPlotMoments(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOut(c.Bool("force"), "out", out, c.String("cld"), c.String("hold")); err != nil {
		return err
	}
	steps, n := c.Int("steps"), c.Int("n")
	if steps < 5 || n < 1 {
		return usageErr("plot moments: --steps must be ≥ 5 and --n ≥ 1, got --steps %d --n %d", c.Int("steps"), c.Int("n"))
	}
	if err := checkInts(c, intRange{name: "steps", lo: 5, hi: maxPlotSteps}, intRange{name: "n", lo: 1, hi: 1 << 24}); err != nil {
		return err
	}
	rows, err := experiment.MomentsRows(c.String(hold.KindCLD), c.String(hold.KindHOLD), steps, c.String("grid"))
	if err != nil {
		return usageErr("plot moments: %v", err)
	}
	if err := experiment.MomentsFigure(out, rows, steps, n, c.String("grid"), c.Uint64("seed")); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "wrote %s (CLD: %s, HOLD: %s)\n", out, rows[0].Label, rows[1].Label)
	return nil
}
