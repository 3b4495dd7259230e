package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/imagedata"
	"holdgo/sample"
	"holdgo/train"
)

// nllOptions are holdctl nll's numeric settings.
type nllOptions struct {
	N     int     `flag:"n" min:"1" max:"1073741824" help:"images evaluated (the first n of the set); point data: held-out points (default 2000, at least 2)"`
	Batch int     `flag:"batch" min:"1" max:"65536" help:"images per ODE solve (point data: points, default 1000)"`
	Tol   float64 `flag:"tol" gt:"0" lt:"1" help:"rtol = atol of the ODE solver (CLD-SGM: 1e-5)"`
	Eps   float64 `flag:"eps" gt:"0" note:"below the horizon T" help:"start time of the ODE"`
	Seed  uint64  `flag:"seed" help:"seed of dequantisation, auxiliary variables and ε"`
	Clip  float64 `flag:"clip" min:"0" help:"integrate the flow of the denoiser with x̂₀ thresholded to [−clip, clip] (the model sample --clip draws from; on the shipped VP model 0.009 bits/dim lower than 0 at 2.2× the time); 0: the network's own flow, the likelihood CLD-SGM and score_sde report"`
	threadsOption
	DataSeed uint64 `flag:"data-seed" help:"point data: seed of the held-out draws of the run's data (default: derived from, never equal to, the training seed)"`
}

func nllCommand() *cli.Command {
	opt := nllOptions{N: 16, Batch: 16, Tol: 1e-5, Eps: 1e-5}
	return withConfig(&cli.Command{
		Name:  "nll",
		Usage: "likelihood bound of held-out data (images: bits/dim; points: nats and bits/dim, mean ± s.e.) under a checkpoint (probability-flow ODE)",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "ckpt", Usage: "run directory or checkpoint file of holdctl train (image data)"},
			&cli.StringFlag{Name: "data", Usage: "images to evaluate (default: the run's data set, test split: #test)"},
			&cli.StringFlag{Name: "estimator", Value: sample.EstimatorRademacher, Usage: "rademacher or gaussian"},
			gaugeFlag(),
			&cli.BoolFlag{Name: "raw-weights", Usage: "use the raw weights instead of the EMA weights"},
			trainDataFlag(),
			deviceFlag(),
		},
		Action: func(c *cli.Context) error {
			if !c.IsSet("ckpt") {
				return usageErr("nll needs --ckpt DIR (a run trained on images)")
			}
			opt.apply()
			if err := checkGauge(c); err != nil {
				return err
			}
			m, err := train.LoadModel(c.String("ckpt"), c.Bool("raw-weights"), c.String("train-data"))
			if err != nil {
				return usageErr("%v", err)
			}
			// --device: the network's evaluations and vector–Jacobian products run there; the ODE
			// state and the estimator stay on the host.
			dev, err := openDevice(c.String("device"))
			if err != nil {
				return usageErr("%v", err)
			}
			if ns, ok := m.Score.(*train.NetworkScorer); ok {
				if err := ns.Net.Parameters().ToDevice(dev); err != nil {
					return usageErr("--device %s: %v", c.String("device"), err)
				}
			}
			div, ok := m.Score.(sample.DivScorer)
			if !ok {
				return usageErr("the score of %s has no vector–Jacobian product", c.String("ckpt"))
			}
			if !imagedata.IsSpec(m.Config.Data) { // point data: nll_points.go
				if opt.Clip != 0 {
					return usageErr("--clip thresholds images' x̂₀ to the data range; %s was trained on points", c.String("ckpt"))
				}
				return runPointNLL(c, opt, m, div)
			}
			ds, spec, err := experiment.NLLImages(m, c.String("data"))
			if err != nil {
				return usageErr("%v", err)
			}
			n := min(opt.N, ds.Len())
			if n < 1 {
				return usageErr("--n must be ≥ 1")
			}
			if err := checkBudget("n", int64(n), int64(ds.Dimension())*8); err != nil {
				return err
			}
			cfg := sample.LikelihoodConfig{Eps: opt.Eps, RTol: opt.Tol, ATol: opt.Tol,
				Estimator: c.String("estimator"), MaxBatch: opt.Batch, Gauge: c.String("gauge"), Clip: opt.Clip}
			start := time.Now()
			res, err := experiment.ImageNLL(m, div, ds, n, cfg, opt.Seed)
			if err != nil {
				return err
			}
			clip := ""
			if opt.Clip > 0 {
				clip = fmt.Sprintf(", x̂₀ clipped to ±%g", opt.Clip)
			}
			fmt.Fprintf(c.App.Writer, "%s: %d images of %s, %s%s%s: %s bits/dim (aux-corrected %s), NFE %d, %.1fs\n",
				c.String("ckpt"), n, spec, m.Config.SDE, gaugeNote(c), clip, res.BitsPerDim, res.BitsPerDimAux, res.NFE, time.Since(start).Seconds())
			return nil
		},
	}, &opt)
}

// gaugeFlag is nll's --gauge: which deterministic flow the likelihood integrates.
func gaugeFlag() cli.Flag {
	return &cli.StringFlag{Name: "gauge", Value: sample.GaugeKernel, Usage: "flow integrated: kernel (the probability-flow ODE of the state) or aligned (the sufficient statistic's flow; the same likelihood, fewer evaluations on HOLD)"}
}

// checkGauge refuses an unknown --gauge.
func checkGauge(c *cli.Context) error {
	if g := c.String("gauge"); g != sample.GaugeKernel && g != sample.GaugeAligned {
		return usageErr("--gauge %q: want kernel or aligned", g)
	}
	return nil
}

// gaugeNote is ", aligned gauge" for --gauge aligned and "" for the default.
func gaugeNote(c *cli.Context) string {
	if c.String("gauge") == sample.GaugeAligned {
		return ", aligned gauge"
	}
	return ""
}
