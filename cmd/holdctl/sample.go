package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/hold"
	"holdgo/internal/parallel"
	"holdgo/plot"
	"holdgo/sample"
	"holdgo/train"
)

// samplerSpec is how to sample: the method (a sample.Registry name), its step budget and grid.
type samplerSpec struct {
	Method  string  // a name of sample.Registry
	NFE     int     // score evaluations (fixed-step methods); 0: use Steps
	Steps   int     // steps (fixed-step methods)
	Grid    string  // uniform, quadratic, geometric, logsnr, edm
	End     float64 // end time ε of the reverse process
	Denoise bool    // final step at ε: CLD-SGM's denoising, or the x̂₀ read-out (one more evaluation)
	Tol     float64 // adaptive ODE rtol = atol
	Eta     float64 // xanc: 1 the posterior step, 0 xddim
	EtaSet  bool
}

// build returns a sampler for sde and score on data of dimension d.
func (s samplerSpec) build(sde *hold.SDE, score hold.Scorer, d int) (*sample.Sampler, error) {
	m, perStep, err := sample.NewMethod(s.Method, sample.Options{Tol: s.Tol, Eta: s.Eta, EtaSet: s.EtaSet})
	if err != nil {
		return nil, err
	}
	steps := s.Steps
	if s.NFE > 0 || perStep == 0 {
		if steps, err = sample.StepsFor(s.Method, s.NFE, s.Denoise); err != nil {
			return nil, fmt.Errorf("--nfe: %w", err)
		}
	}
	if steps < 1 {
		return nil, fmt.Errorf("--steps %d: want at least one step", steps)
	}
	if !(s.End > 0 && s.End < sde.Horizon()) {
		return nil, fmt.Errorf("--eps %g must be in (0, T = %g)", s.End, sde.Horizon())
	}
	grid, err := sample.NewSDEGrid(sde, s.Grid, sde.Horizon(), s.End, steps)
	if err != nil {
		return nil, err
	}
	return &sample.Sampler{SDE: sde, Score: score, Method: m, Grid: grid, Dim: d, Denoise: s.Denoise}, nil
}

func samplerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "sampler", Value: "lt", Usage: strings.Join(sample.MethodNames(), ", ")},
		&cli.IntFlag{Name: "nfe", Usage: "score evaluations (sets the steps of fixed-step samplers)"},
		&cli.IntFlag{Name: "steps", Value: 150, Usage: "steps of fixed-step samplers (when --nfe is not given)"},
		&cli.StringFlag{Name: "grid", Value: sample.GridQuadratic, Usage: "time grid: " + strings.Join(sample.GridKinds, ", ")},
		&cli.Float64Flag{Name: "eps", Value: 1e-3, Usage: "end time ε of the reverse process"},
		&cli.BoolFlag{Name: "denoise", Usage: "final noise-free step at ε (CLD-SGM's denoising; one more evaluation)"},
		&cli.Float64Flag{Name: "tol", Value: 1e-5, Usage: "rtol = atol of the adaptive ODE sampler"},
		&cli.Float64Flag{Name: "eta", Value: 1, Usage: "xanc: 1 the exact Gaussian-posterior step, 0 xddim, in between the DDIM-style blend"},
	}
}

func samplerSpecFrom(c *cli.Context) samplerSpec {
	return samplerSpec{Method: c.String("sampler"), NFE: c.Int("nfe"), Steps: c.Int("steps"), Grid: c.String("grid"),
		End: c.Float64("eps"), Denoise: c.Bool("denoise"), Tol: c.Float64("tol"), Eta: c.Float64("eta"), EtaSet: true}
}

// model is what sampling needs: the SDE, a score and the data it models.
type model struct {
	cfg    train.RunConfig
	sde    *hold.SDE
	score  hold.Scorer
	source data.Source
}

// ckptPath accepts a run directory or a checkpoint file.
func ckptPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, ckptName)
	}
	return p
}

// loadModel rebuilds a trained model from its checkpoint (EMA weights unless raw).
func loadModel(path string, raw bool) (*model, error) {
	f, err := checkpoint.Load(ckptPath(path))
	if err != nil {
		return nil, err
	}
	cfg, err := train.ConfigFromCheckpoint(f)
	if err != nil {
		return nil, err
	}
	built, err := cfg.Build()
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: %w", f.Path, err)
	}
	if err := train.LoadWeights(f, built.Net.Parameters(), !raw); err != nil {
		return nil, err
	}
	return &model{cfg: cfg, sde: built.SDE, score: &train.NetworkScorer{SDE: built.SDE, Net: built.Net}, source: built.Source}, nil
}

// oracleModel is the exact score of mixture data under the SDE of cfg.
func oracleModel(cfg train.RunConfig) (*model, error) {
	src, err := data.Open(cfg.Data, cfg.SwissNoise)
	if err != nil {
		return nil, err
	}
	mix, ok := src.(data.Mixture)
	if !ok {
		return nil, fmt.Errorf("--oracle needs mixture data with a closed-form score (gmm1d), not %s", src.Name())
	}
	hc, err := cfg.SDEConfig()
	if err != nil {
		return nil, err
	}
	sde, err := hold.New(hc)
	if err != nil {
		return nil, err
	}
	oracle, err := hold.NewMixtureOracle(sde, mix.Hold())
	if err != nil {
		return nil, err
	}
	return &model{cfg: cfg, sde: sde, score: oracle, source: src}, nil
}

// firstBlock extracts the data block q (n×d) from states (n×blocks·d) as float32.
func firstBlock(x []float64, n, blocks, d int) []float32 {
	out := make([]float32, n*d)
	for i := range n {
		for j := range d {
			out[i*d+j] = float32(x[i*blocks*d+j])
		}
	}
	return out
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

// convergedRows returns the rows of x (n × d) that sample.Diverged accepts
// and how many it dropped.
func convergedRows(x []float32, d int) ([]float32, int) {
	out := make([]float32, 0, len(x))
	dropped := 0
	for i := 0; i+d <= len(x); i += d {
		if sample.Diverged(x[i : i+d]) {
			dropped++
			continue
		}
		out = append(out, x[i:i+d]...)
	}
	return out, dropped
}

func sampleCommand() *cli.Command {
	d := train.DefaultRunConfig()
	return &cli.Command{
		Name:  "sample",
		Usage: "draw samples from a trained checkpoint or from the exact score of mixture data",
		Flags: append(samplerFlags(),
			&cli.StringFlag{Name: "ckpt", Usage: "run directory or checkpoint file of holdctl train"},
			&cli.BoolFlag{Name: "raw-weights", Usage: "use the raw weights instead of the EMA weights"},
			&cli.BoolFlag{Name: "oracle", Usage: "use the exact score of the data (mixture data only: --data gmm1d)"},
			&cli.StringFlag{Name: "data", Value: data.NameGMM1D, Usage: "data of --oracle"},
			&cli.StringFlag{Name: "sde", Value: d.SDE, Usage: "SDE of --oracle: hold, cld, vp or ve"},
			&cli.IntFlag{Name: "order", Value: d.Order, Usage: "HOLD order of --oracle"},
			&cli.Float64Flag{Name: "L", Value: d.L, Usage: "HOLD L of --oracle"},
			&cli.Float64Flag{Name: "alpha", Value: d.Alpha, Usage: "HOLD α of --oracle"},
			&cli.IntFlag{Name: "n", Value: 10000, Usage: "number of samples"},
			&cli.Uint64Flag{Name: "seed", Value: 0, Usage: "random seed"},
			&cli.StringSliceFlag{Name: "out", Value: cli.NewStringSlice("samples.npy"), Usage: "output files: .npy (float32, (n, d)) and/or .png"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("sample takes no arguments, got %q", c.Args().First())
			}
			parallel.SetThreads(c.Int("threads"))
			var (
				m   *model
				err error
			)
			switch {
			case c.Bool("oracle") && c.IsSet("ckpt"):
				return usageErr("give either --ckpt or --oracle, not both")
			case c.Bool("oracle"):
				cfg := d
				cfg.Data, cfg.SDE, cfg.Order, cfg.L, cfg.Alpha = c.String("data"), c.String("sde"), c.Int("order"), c.Float64("L"), c.Float64("alpha")
				m, err = oracleModel(cfg)
			case c.IsSet("ckpt"):
				m, err = loadModel(c.String("ckpt"), c.Bool("raw-weights"))
			default:
				return usageErr("sample needs --ckpt DIR (a trained run) or --oracle (exact score of mixture data)")
			}
			if err != nil {
				return usageErr("%v", err)
			}
			if c.Int("n") < 1 {
				return usageErr("--n must be ≥ 1")
			}
			outs := c.StringSlice("out")
			for _, o := range outs {
				if ext := filepath.Ext(o); ext != ".npy" && ext != ".png" {
					return usageErr("--out %s: want a .npy or .png file", o)
				}
				if err := checkWritableDir(o); err != nil {
					return usageErr("--out %s: %v", o, err)
				}
			}
			s, err := samplerSpecFrom(c).build(m.sde, m.score, m.source.Dimension())
			if err != nil {
				return usageErr("%v", err)
			}
			start := time.Now()
			res, err := s.Sample(c.Int("n"), c.Uint64("seed"))
			if err != nil {
				return err
			}
			elapsed := time.Since(start)
			dim := m.source.Dimension()
			q := firstBlock(res.X, c.Int("n"), m.sde.Blocks(), dim)
			for _, o := range outs {
				if err := writeModelSamples(m.source, o, q, dim, fmt.Sprintf("%s, %s, NFE %d", m.cfg.SDE, s.Method.Name(), res.NFE)); err != nil {
					return err
				}
			}
			fmt.Fprintf(c.App.Writer, "%d samples, sampler %s, NFE %d, %.2fs; wrote %s\n", c.Int("n"), s.Method.Name(), res.NFE,
				elapsed.Seconds(), strings.Join(outs, ", "))
			warnDiverged(c.App.ErrWriter, res.Diverged, c.Int("n"), "a .npy keeps them as they are, a picture leaves them out")
			return nil
		},
	}
}

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

// writeSamples writes points (n×dim) as .npy or as a picture (.png):
// a histogram for 1-D data, a scatter plot for 2-D.
func writeSamples(path string, q []float32, dim int, title string) error {
	if filepath.Ext(path) == ".npy" {
		return data.WriteNPY32(path, q, len(q)/dim, dim)
	}
	q, _ = convergedRows(q, dim) // one path at 1e9 would shrink the rest to a dot
	switch dim {
	case 1:
		return plot.Histogram(path, q, plot.HistogramOptions{Title: title, Bins: 200})
	case 2:
		return plot.Scatter(path, q, plot.ScatterOptions{Title: title})
	}
	return fmt.Errorf("%s: a picture needs 1-D or 2-D points, these have %d dimensions; write .npy instead", path, dim)
}
