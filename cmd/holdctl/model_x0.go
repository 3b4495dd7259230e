package main

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/rng"
	"holdgo/sample"
)

// holdctl model x0: how good a trained image network's data prediction x̂₀ is along the forward path,
// noise level by noise level — the diagnosis behind the x̂₀ samplers' behaviour on images (docs/images.md).

func modelX0Command() *cli.Command {
	return &cli.Command{
		Name:  "x0",
		Usage: "the error of a trained image model's x̂₀ = E[q0 | x_t] along the forward path from test images, per noise level",
		Description: "Draws x_t = m_t q0 + L_t ε from the first --n images of --data (default: the test split of the run's\n" +
			"data) at --levels noise levels σ of the state's sufficient statistic, evenly spaced in log σ from σ(T) to\n" +
			"--sigma-min, and prints per level the time, σ, the RMS error of the network's x̂₀ (from its last-block\n" +
			"score: x̂₀ = (S + rᵀu)/(rᵀm_t), r = Σ_t⁻¹e_n), that error over σ (the error of the statistic c itself is\n" +
			"σ), and the RMS and largest |x̂₀| (data in [−1, 1]).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Required: true, Usage: "trained image run or shipped model"},
			&cli.StringFlag{Name: "data", Usage: "images (default: the test split of the run's data)"},
			&cli.IntFlag{Name: "n", Value: 16, Usage: "images"},
			&cli.IntFlag{Name: "levels", Value: 12, Usage: "noise levels"},
			&cli.Float64Flag{Name: "sigma-min", Value: sample.DefaultSigmaMin, Usage: "smallest noise level"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the forward noise"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines"},
		},
		Action: runModelX0,
	}
}

// x0Level is one row of model x0.
type x0Level struct {
	T        float64 `json:"t"`
	Sigma    float64 `json:"sigma"`
	RMSError float64 `json:"rms_error"`
	Ratio    float64 `json:"error_over_sigma"`
	RMS      float64 `json:"rms_x0"`
	MaxAbs   float64 `json:"max_abs_x0"`
}

func runModelX0(c *cli.Context) error {
	n, levels := c.Int("n"), c.Int("levels")
	if n < 1 || n > 4096 || levels < 2 || levels > 100 {
		return usageErr("model x0: want --n in 1…4096 and --levels in 2…100, got %d and %d", n, levels)
	}
	if err := setThreads(c); err != nil {
		return err
	}
	m, ds, test, spec, err := imageModelAndImages(c, "model x0", n)
	if err != nil {
		return err
	}
	d := ds.Dimension()
	sde := m.SDE
	smax, err := sample.NoiseLevel(sde, sde.Horizon())
	if err != nil {
		return err
	}
	smin := c.Float64("sigma-min")
	if !(smin > 0 && smin < smax) {
		return usageErr("model x0: --sigma-min %g must be in (0, %g)", smin, smax)
	}
	q0 := make([]float32, n*d)
	for i := range n {
		test.Scale(q0[i*d:(i+1)*d], test.Pixels(i), false, nil)
	}
	blocks := sde.Blocks()
	r := rng.New(c.Uint64("seed"))
	eps := make([]float64, n*blocks*d)
	for i := range eps {
		eps[i] = r.Normal()
	}
	u := make([]float64, n*blocks*d)
	x0 := make([]float64, n*d)
	times := make([]float64, n)
	if !c.Bool("json") {
		fmt.Fprintf(c.App.Writer, "x̂₀ of %s on %d images of %s (%s)\n%10s %10s %12s %10s %8s %8s\n", c.String("ckpt"), n, spec, m.Config.SDE,
			"t", "σ", "rms error", "error/σ", "rms x̂₀", "max|x̂₀|")
	}
	for k := range levels {
		sigma := math.Exp(math.Log(smax) + float64(k)/float64(levels-1)*(math.Log(smin)-math.Log(smax)))
		t, err := sample.TimeAtNoiseLevel(sde, sigma, sde.MinTime(), sde.Horizon())
		if err != nil {
			return usageErr("model x0: %v", err)
		}
		kern := sde.Kernel(t)
		for i := range n {
			times[i] = t
		}
		experiment.ForwardStates(u, q0, eps, kern, n, blocks, d)
		if err := sample.PredictX0(sde, m.Score, x0, u, times); err != nil {
			return err
		}
		var e2, s2, mx float64
		for i, v := range x0 {
			e := v - float64(q0[i])
			e2 += e * e
			s2 += v * v
			mx = math.Max(mx, math.Abs(v))
		}
		row := x0Level{T: t, Sigma: sigma, RMSError: math.Sqrt(e2 / float64(len(x0))), RMS: math.Sqrt(s2 / float64(len(x0))), MaxAbs: mx}
		row.Ratio = row.RMSError / sigma
		if c.Bool("json") {
			if err := json.NewEncoder(c.App.Writer).Encode(row); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(c.App.Writer, "%10.4g %10.4g %12.4g %10.3g %8.3g %8.3g\n", row.T, row.Sigma, row.RMSError, row.Ratio, row.RMS, row.MaxAbs)
	}
	return nil
}
