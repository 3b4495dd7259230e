package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/internal/parallel"
	"holdgo/sample"
)

// nllOptions are holdctl nll's numeric settings.
type nllOptions struct {
	N     int     `flag:"n" min:"1" max:"1073741824" help:"images evaluated (the first n of the set); point data: held-out points (default 2000, at least 2)"`
	Batch int     `flag:"batch" min:"1" max:"65536" help:"images per ODE solve (point data: points, default 1000)"`
	Tol   float64 `flag:"tol" gt:"0" lt:"1" help:"rtol = atol of the ODE solver (CLD-SGM: 1e-5)"`
	Eps   float64 `flag:"eps" gt:"0" note:"below the horizon T" help:"start time of the ODE"`
	Seed  uint64  `flag:"seed" help:"seed of dequantisation, auxiliary variables and ε"`
	Clip  float64 `flag:"clip" min:"0" help:"integrate the flow of the denoiser with x̂₀ thresholded to [−clip, clip] (the model sample --clip draws from; on the shipped VP model 0.009 bits/dim lower than 0 at 2.2× the time); 0: the network's own flow, the likelihood CLD-SGM and score_sde report"`
	parallel.ThreadsOption
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
			precisionFlag(),
		},
		Action: func(c *cli.Context) error {
			opt.Apply()
			open, err := openFlag(c)
			if err != nil {
				return err
			}
			return inputExit(experiment.RunNLL(experiment.NLLRun{IsSet: c.IsSet, Ckpt: c.String("ckpt"), Raw: c.Bool("raw-weights"),
				TrainData: c.String("train-data"), Data: c.String("data"), Estimator: c.String("estimator"), Gauge: c.String("gauge"),
				N: opt.N, Batch: opt.Batch, Tol: opt.Tol, Eps: opt.Eps, Clip: opt.Clip, Seed: opt.Seed, DataSeed: opt.DataSeed,
				Device: c.String("device"), Open: open}, c.App.Writer))
		},
	}, &opt)
}

// gaugeFlag is nll's --gauge: which deterministic flow the likelihood integrates.
func gaugeFlag() cli.Flag {
	return &cli.StringFlag{Name: "gauge", Value: sample.GaugeKernel, Usage: "flow integrated: kernel (the probability-flow ODE of the state) or aligned (the sufficient statistic's flow; the same likelihood, fewer evaluations on HOLD)"}
}
