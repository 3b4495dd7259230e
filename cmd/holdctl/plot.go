package main

import (
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
	"holdgo/plot"
	"holdgo/sample"
	"holdgo/train"
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
// or nothing replaced).
func checkPNGOut(flag, path string, inputs ...string) error {
	return checkPNGOutForce(false, flag, path, inputs...)
}

// checkPNGOutForce is checkPNGOut where --force may replace another kind of file.
func checkPNGOutForce(force bool, flag, path string, inputs ...string) error {
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

// marginalGrid is the closed-form density of block j of the forward-diffused 1-D mixture at the
// times (cell centres), averaged over cells of the positions xs (so that modes narrower than a cell
// are not missed): under component k the block is N(a_j m_k, Σ_jj + σ_k² a_j²).
func marginalGrid(sde *hold.SDE, mix data.Mixture, block int, times, xs []float64) plot.Grid {
	g := plot.Grid{T: times, X: xs, Z: make([]float64, len(times)*len(xs))}
	half := (xs[1] - xs[0]) / 2
	var wsum float64
	for _, w := range mix.Weights {
		wsum += w
	}
	for i, t := range times {
		k := sde.Kernel(t)
		a, v := k.Mean.At(block, 0), k.Sigma.At(block, block)
		for c, w := range mix.Weights {
			mu, sd := a*mix.Means[c], math.Sqrt(v+mix.Stds[c]*mix.Stds[c]*a*a)
			for j, x := range xs {
				lo, hi := (x-half-mu)/sd, (x+half-mu)/sd
				g.Z[i*len(xs)+j] += w / wsum * (normCDF(hi) - normCDF(lo)) / (2 * half)
			}
		}
	}
	return g
}

func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// cells returns n evenly spaced cell centres covering [lo, hi].
func cells(lo, hi float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = lo + (float64(i)+0.5)*(hi-lo)/float64(n)
	}
	return out
}

// tracePaths runs spec's sampler from prior draws and returns the recorded times (decreasing) and the
// states (n × blocks·d) at each: every grid time for fixed-step methods, 200 evenly spaced times for
// the adaptive ODE.
func tracePaths(m *train.Model, spec sample.Spec, n int, seed uint64) ([]float64, [][]float64, error) {
	s, err := spec.Build(m.SDE, m.Score, m.Source.Dimension())
	if err != nil {
		return nil, nil, err
	}
	if spec.Method == "ode" {
		s.Record = cells(spec.End, m.SDE.Horizon(), 200)
		s.Record = append(s.Record, spec.End, m.SDE.Horizon())
		slices.Sort(s.Record)
		slices.Reverse(s.Record)
	} else {
		s.Record = s.Grid
	}
	res, err := s.Sample(n, seed)
	if err != nil {
		return nil, nil, err
	}
	return res.Trajectory.Times, res.Trajectory.States, nil
}

// blockPaths extracts block j of 1-D trajectories as heat-map paths.
func blockPaths(times []float64, states [][]float64, n, blocks, j int) []plot.Path {
	paths := make([]plot.Path, n)
	for i := range paths {
		paths[i] = plot.Path{T: times, X: make([]float64, len(times))}
		for k := range times {
			paths[i].X[k] = states[k][i*blocks+j]
		}
	}
	return paths
}

// heatPanel is one panel of a side-by-side figure.
type heatPanel struct {
	grid  plot.Grid
	paths []plot.Path
	opt   plot.HeatmapOptions
}

// writeHeatPanels draws the panels with plot.Heatmap and writes them side by side as one PNG.
func writeHeatPanels(out string, panels []heatPanel) error {
	tmp, err := os.MkdirTemp("", "holdctl-plot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	imgs := make([]image.Image, len(panels))
	width, height := 0, 0
	for i, p := range panels {
		path := filepath.Join(tmp, fmt.Sprintf("panel%d.png", i))
		if err := plot.Heatmap(path, p.grid, p.paths, p.opt); err != nil {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		imgs[i], err = png.Decode(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("decode %s: %w", path, err)
		}
		width += imgs[i].Bounds().Dx()
		height = max(height, imgs[i].Bounds().Dy())
	}
	canvas := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(canvas, canvas.Bounds(), image.NewUniform(color.White), image.Point{}, draw.Src)
	x := 0
	for _, img := range imgs {
		b := img.Bounds()
		draw.Draw(canvas, image.Rect(x, 0, x+b.Dx(), b.Dy()), img, b.Min, draw.Src)
		x += b.Dx()
	}
	if err := atomicfile.Write(out, func(w io.Writer) error { return png.Encode(w, canvas) }); err != nil {
		return fmt.Errorf("write %s: %w", out, err)
	}
	return nil
}

// sdeTitle names an SDE in figures.
func sdeTitle(sde *hold.SDE) string {
	if cfg := sde.Config(); cfg.Kind == hold.KindHOLD {
		return fmt.Sprintf("HOLD-%d", cfg.Order)
	}
	return strings.ToUpper(sde.Config().Kind)
}

func runPlotFlow(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOutForce(c.Bool("force"), "out", out); err != nil {
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
	mix := data.PaperMixture()
	var panels []heatPanel
	for _, kind := range kinds {
		m, err := train.Oracle1D(kind, 0)
		if err != nil {
			return err
		}
		end := 1e-3
		if kind == hold.KindVP {
			end = 1e-5
		}
		spec := sample.Spec{Method: "ode", Grid: sample.GridUniform, End: end, Tol: c.Float64("tol")}
		times, states, err := tracePaths(m, spec, c.Int("paths"), c.Uint64("seed"))
		if err != nil {
			return fmt.Errorf("plot flow %s: %w", kind, err)
		}
		lim := math.Max(1.2, 3.5*math.Sqrt(m.SDE.PriorVariance(0)))
		grid := marginalGrid(m.SDE, mix, 0, cells(0, m.SDE.Horizon(), 300), cells(-lim, lim, 300))
		panels = append(panels, heatPanel{grid: grid, paths: blockPaths(times, states, c.Int("paths"), m.SDE.Blocks(), 0),
			opt: plot.HeatmapOptions{Title: sdeTitle(m.SDE) + ": density of q and ODE paths",
				YLabel: "q", Width: 560, Height: 460, ColumnNormalize: true,
				LineColor: color.NRGBA{R: 255, G: 255, B: 255, A: 220}, LineWidth: 0.8}})
	}
	if err := writeHeatPanels(out, panels); err != nil {
		return fmt.Errorf("plot flow: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "wrote %s (%s; exact oracle score of the paper's 1-D mixture)\n", out, strings.Join(kinds, ", "))
	return nil
}

func runPlotBlocks(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOutForce(c.Bool("force"), "out", out); err != nil {
		return err
	}
	if c.Int("paths") < 1 || c.Int("steps") < 1 {
		return usageErr("plot blocks: --paths and --steps must be ≥ 1, got --paths %d --steps %d", c.Int("paths"), c.Int("steps"))
	}
	if err := checkInts(c, intRange{name: "paths", lo: 1, hi: maxPlotPaths}, intRange{name: "steps", lo: 1, hi: maxPlotSteps}); err != nil {
		return err
	}
	spec := sample.Spec{Method: c.String("sampler"), Steps: c.Int("steps"), Grid: sample.GridQuadratic, End: 1e-3, Tol: 1e-5}
	if _, err := sample.Lookup(spec.Method); err != nil {
		return usageErr("plot blocks: %v", err)
	}
	m, err := train.Oracle1D(hold.KindHOLD, c.Int("order"))
	if err != nil {
		return usageErr("plot blocks: %v", err)
	}
	times, states, err := tracePaths(m, spec, c.Int("paths"), c.Uint64("seed"))
	if err != nil {
		return fmt.Errorf("plot blocks: %w", err)
	}
	names := []string{"position q", "velocity p", "acceleration s", "jerk (4th block)"}
	colors := []color.Color{
		color.NRGBA{R: 255, G: 255, B: 255, A: 220}, color.NRGBA{R: 255, G: 230, B: 0, A: 220},
		color.NRGBA{R: 0, G: 230, B: 60, A: 220}, color.NRGBA{R: 0, G: 220, B: 255, A: 220},
	}
	mix := data.PaperMixture()
	var panels []heatPanel
	for j := range m.SDE.Blocks() {
		lim := math.Max(1.2, 3.5*math.Sqrt(m.SDE.PriorVariance(j)))
		paths := blockPaths(times, states, c.Int("paths"), m.SDE.Blocks(), j)
		for _, p := range paths {
			for _, v := range p.X {
				if !math.IsNaN(v) && !math.IsInf(v, 0) {
					lim = math.Max(lim, 1.05*math.Abs(v))
				}
			}
		}
		grid := marginalGrid(m.SDE, mix, j, cells(0, m.SDE.Horizon(), 300), cells(-lim, lim, 300))
		panels = append(panels, heatPanel{grid: grid, paths: paths,
			opt: plot.HeatmapOptions{Title: fmt.Sprintf("HOLD-%d %s (%s paths)", m.SDE.Blocks(), names[j], spec.Method),
				YLabel: strings.Fields(names[j])[1], Width: 520, Height: 440, ColumnNormalize: true,
				LineColor: colors[j], LineWidth: 0.7}})
	}
	if err := writeHeatPanels(out, panels); err != nil {
		return fmt.Errorf("plot blocks: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "wrote %s (HOLD-%d, %s sampler; exact oracle score of the paper's 1-D mixture)\n", out, m.SDE.Blocks(), spec.Method)
	return nil
}

// swissMixture is a 2-D Gaussian mixture laid along the paper's five Swiss rolls (perRoll components
// per roll, evenly spaced in arc length, equally weighted, standard deviation std): data with an exact oracle score that
// looks like the multi Swiss roll.
func swissMixture(perRoll int, std float64) hold.Mixture {
	roll := data.PaperSwissRoll()
	var mix hold.Mixture
	for _, c := range roll.Centers {
		// t = 1.5π(1 + 2u); points spaced evenly in arc length (∝ t²) along the spiral
		lo, hi := 1.5*math.Pi, 4.5*math.Pi
		for k := range perRoll {
			u := (float64(k) + 0.5) / float64(perRoll)
			t := math.Sqrt(lo*lo + u*(hi*hi-lo*lo))
			mix.Means = append(mix.Means, []float64{c[0] + roll.Scale*t*math.Cos(t), c[1] + roll.Scale*t*math.Sin(t)})
			mix.Weights = append(mix.Weights, 1/float64(perRoll*len(roll.Centers)))
			mix.Stds = append(mix.Stds, std)
		}
	}
	return mix
}

// momentsModel returns the trained model of a --cld/--hold flag (checked to be of kind on 2-D data) or
// the oracle of the Swiss-roll mixture, and a label saying which.
func momentsModel(kind, ckpt string) (*train.Model, string, error) {
	if ckpt != "" {
		m, err := train.LoadModelOf(kind, ckpt)
		if err != nil {
			return nil, "", err
		}
		if m.Source.Dimension() != 2 {
			return nil, "", fmt.Errorf("--%s %s: a model of %d-D data (%s); the figure needs 2-D data", kind, ckpt, m.Source.Dimension(), m.Config.Data)
		}
		return m, "trained", nil
	}
	sde, err := hold.New(hold.DefaultConfig(kind))
	if err != nil {
		return nil, "", err
	}
	mix := swissMixture(20, 0.012)
	orc, err := hold.NewMixtureOracle(sde, mix)
	if err != nil {
		return nil, "", err
	}
	return &train.Model{Config: train.OracleRunConfig(sde.Config(), "swiss-roll mixture"), SDE: sde, Score: orc, Source: data.FromHold(mix)}, "oracle", nil
}

func runPlotMoments(c *cli.Context) error {
	out := c.String("out")
	if err := checkPNGOutForce(c.Bool("force"), "out", out, c.String("cld"), c.String("hold")); err != nil {
		return err
	}
	steps, n := c.Int("steps"), c.Int("n")
	if steps < 5 || n < 1 {
		return usageErr("plot moments: --steps must be ≥ 5 and --n ≥ 1, got --steps %d --n %d", c.Int("steps"), c.Int("n"))
	}
	if err := checkInts(c, intRange{name: "steps", lo: 5, hi: maxPlotSteps}, intRange{name: "n", lo: 1, hi: 1 << 24}); err != nil {
		return err
	}
	type row struct {
		kind  string
		m     *train.Model
		label string
	}
	var rows []row
	for _, kind := range []string{hold.KindCLD, hold.KindHOLD} {
		m, label, err := momentsModel(kind, c.String(kind))
		if err != nil {
			return usageErr("plot moments: %v", err)
		}
		rows = append(rows, row{kind, m, label})
	}
	var panels []plot.Panel
	for _, r := range rows {
		spec := sample.Spec{Method: "lt", Steps: steps, Grid: c.String("grid"), End: 1e-3}
		s, err := spec.Build(r.m.SDE, r.m.Score, 2)
		if err != nil {
			return usageErr("plot moments: %v", err)
		}
		if r.label == "oracle" { // the oracle is safe for concurrent use; networks are not
			s.MaxBatch, s.Workers = 256, runtime.NumCPU()
		}
		moments := make([]int, 6)
		for i := range moments {
			moments[i] = int(math.Round(float64(i) * float64(steps) / 5))
		}
		s.Record = make([]float64, len(moments))
		for i, k := range moments {
			s.Record[i] = s.Grid[k]
		}
		res, err := s.Sample(n, c.Uint64("seed"))
		if err != nil {
			return fmt.Errorf("plot moments %s: %w", r.kind, err)
		}
		for i, k := range moments {
			panels = append(panels, plot.Panel{
				Title: fmt.Sprintf("%s (%s) step %d, t = %.3g", sdeTitle(r.m.SDE), r.label, k, res.Trajectory.Times[i]),
				XY:    sample.FirstBlock(res.Trajectory.States[i], n, r.m.SDE.Blocks(), 2),
			})
		}
	}
	title := fmt.Sprintf("CLD (SSCS) and HOLD (Lie–Trotter), %d samples at six moments of %d steps (%s grid)", n, steps, c.String("grid"))
	if err := plot.ScatterGrid(out, panels, plot.GridOptions{Title: title, Cols: 6, PanelSize: 260, MarkerRadius: 0.6}); err != nil {
		return fmt.Errorf("plot moments: %w", err)
	}
	fmt.Fprintf(c.App.Writer, "wrote %s (CLD: %s, HOLD: %s)\n", out, rows[0].label, rows[1].label)
	return nil
}
