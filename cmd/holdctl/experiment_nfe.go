package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/hold"
	"holdgo/internal/parallel"
	"holdgo/sample"
)

// experimentNFECommand reproduces the paper's Table 2 on toy data:
//
//	holdctl experiment nfe --samples 20000 --out table2.csv
//	holdctl experiment nfe --hold runs/hold --cld runs/cld --vp runs/vp --ve runs/ve
func experimentNFECommand() *cli.Command {
	opt := experimentNFEOptions{Samples: 20000, TrainedSamples: 2000, Seed: 1, FloorReps: 5, Workers: 1}
	return withConfig(&cli.Command{
		Name:  "nfe",
		Usage: "the paper's Table 2 on toy data: sample quality of HOLD-LT, HOLD-EM, CLD-SSCS, VP-EM, VE-PC at fixed NFE",
		Description: "Rows HOLD-LT, HOLD-EM, CLD-SSCS, VP-EM and VE-PC, columns NFE (the final denoising step counted),\n" +
			"cells a sample-quality distance; every cell uses the same seed, so the table is reproducible.\n" +
			"First with the exact (oracle) score of the paper's 1-D mixture, the cells being the exact W1\n" +
			"distance to the mixture; then, when checkpoints are given (--hold, --cld, --vp, --ve: runs of\n" +
			"holdctl train on the same data), with the trained networks (EMA weights), the cells being the\n" +
			"exact W1 for the 1-D mixture and the sliced Wasserstein-2 distance to fresh data otherwise. A\n" +
			"floor row gives the same distance for exact data samples of the same size. Printed as Markdown,\n" +
			"written as CSV (--out).",
		Flags: []cli.Flag{
			&cli.IntSliceFlag{Name: "nfe", Value: cli.NewIntSlice(50, 150, 500, 1000), Usage: "score evaluations per sample (denoising included)"},
			&cli.StringFlag{Name: "grid", Value: sample.GridQuadratic, Usage: "time grid of every row: uniform, quadratic, geometric, logsnr or edm"},
			&cli.StringSliceFlag{Name: "end-time", Usage: "end time per SDE as kind=t (defaults hold=1e-3, cld=1e-3, vp=1e-5, ve=1e-5)"},
			&cli.BoolFlag{Name: "no-denoise", Usage: "drop the final denoising step"},
			&cli.StringFlag{Name: "hold", Usage: "HOLD checkpoint (run directory) for the trained table"},
			&cli.StringFlag{Name: "cld", Usage: "CLD checkpoint"},
			&cli.StringFlag{Name: "vp", Usage: "VP checkpoint"},
			&cli.StringFlag{Name: "ve", Usage: "VE checkpoint"},
			&cli.BoolFlag{Name: "no-oracle", Usage: "skip the oracle table"},
			&cli.StringFlag{Name: "out", Value: "table2.csv", Usage: "CSV output file"},
			forceFlag(),
		},
		Action: func(c *cli.Context) error { return runExperimentNFE(c, opt) },
	}, &opt)
}

// experimentNFEOptions are experiment nfe's numeric settings.
type experimentNFEOptions struct {
	Samples        int    `flag:"samples" min:"2" max:"16777216" help:"samples per oracle cell"`
	TrainedSamples int    `flag:"trained-samples" min:"2" max:"16777216" help:"samples per trained-model cell"`
	Seed           uint64 `flag:"seed" help:"seed (every cell uses it)"`
	FloorReps      int    `flag:"floor-reps" min:"1" max:"1000" help:"replicates of exact samples for the floor"`
	Workers        int    `flag:"workers" min:"1" max:"256" help:"chunks sampled in parallel (oracle table)"`
	parallel.ThreadsOption
}

func runExperimentNFE(c *cli.Context, opt experimentNFEOptions) error {
	ckpts := map[string]string{}
	for _, kind := range hold.Kinds {
		if c.IsSet(kind) {
			ckpts[kind] = c.String(kind)
		}
	}
	return inputExit(experiment.RunTable2(experiment.Table2Run{
		Set: experiment.Table2Config{NFEs: c.IntSlice("nfe"), Seed: opt.Seed, Grid: c.String("grid"), Denoise: !c.Bool("no-denoise"),
			Workers: opt.Workers, Ends: hold.DefaultEndTimes()},
		EndTimes: c.StringSlice("end-time"), MaxNFE: experiment.MaxNFE, Ckpts: ckpts, Oracle: !c.Bool("no-oracle"),
		Samples: opt.Samples, TrainedSamples: opt.TrainedSamples, FloorReps: opt.FloorReps,
		Out: c.String("out"), Force: c.Bool("force"), Ready: opt.Apply,
	}, c.App.Writer))
}
