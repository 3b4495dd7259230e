package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/experiment"
	"holdgo/hold"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
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
	threadsOption
}

func runExperimentNFE(c *cli.Context, opt experimentNFEOptions) error {
	if c.NArg() > 0 {
		return usageErr("experiment nfe takes no arguments, got %q", c.Args().First())
	}
	set := experiment.Table2Config{NFEs: c.IntSlice("nfe"), Seed: opt.Seed, Grid: c.String("grid"), Denoise: !c.Bool("no-denoise"),
		Workers: opt.Workers, Ends: hold.DefaultEndTimes()}
	if len(set.NFEs) == 0 {
		return usageErr("experiment nfe: --nfe needs at least one value")
	}
	for _, n := range set.NFEs {
		if n < 3 {
			return usageErr("experiment nfe: --nfe %d < 3", n)
		}
	}
	if !slices.Contains(sample.GridKinds, set.Grid) {
		return usageErr("experiment nfe: unknown grid %q (want %s)", set.Grid, strings.Join(sample.GridKinds, ", "))
	}
	for _, kv := range c.StringSlice("end-time") {
		kind, val, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseFloat(val, 64)
		if _, known := set.Ends[kind]; !ok || !known || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return usageErr("experiment nfe: --end-time %q: want kind=t with kind hold, cld, vp or ve and a finite t > 0", kv)
		}
		set.Ends[kind] = v
	}
	out := c.String("out")
	if !strings.HasSuffix(out, ".csv") {
		return usageErr("experiment nfe: --out %s: want a .csv file", out)
	}
	if err := outpath.DirExists(out); err != nil {
		return usageErr("experiment nfe: --out %s: %v", out, err)
	}
	for _, n := range c.IntSlice("nfe") {
		if n < 1 || n > maxNFE {
			return usageErr("experiment nfe: --nfe %d: want 1 … %d", n, maxNFE)
		}
	}
	guard := outpath.New(c.Bool("force"))
	guard.Input(c.String("hold"), c.String("cld"), c.String("vp"), c.String("ve"))
	if err := checkOutputs(guard, output{"out", out, outpath.Text}); err != nil {
		return err
	}
	opt.apply()
	// Load every checkpoint before any sampling, so bad input fails fast.
	ckpts := map[string]string{}
	for _, kind := range hold.Kinds {
		if c.IsSet(kind) {
			ckpts[kind] = c.String(kind)
		}
	}
	models, err := experiment.LoadTable2Models(ckpts)
	if err != nil {
		return usageErr("experiment nfe: %v", err)
	}
	if c.Bool("no-oracle") && len(models) == 0 {
		return usageErr("experiment nfe: --no-oracle needs checkpoints (--hold, --cld, --vp, --ve)")
	}
	w := c.App.Writer
	tables, err := experiment.Table2(set, models, !c.Bool("no-oracle"), opt.Samples, opt.TrainedSamples, opt.FloorReps, w)
	if err != nil {
		return fmt.Errorf("experiment nfe: %w", err)
	}
	if err := atomicfile.Write(out, func(f io.Writer) error { return experiment.WriteTable2CSV(f, tables) }); err != nil {
		return fmt.Errorf("experiment nfe: write %s: %w", out, err)
	}
	fmt.Fprintf(w, "wrote %s\n", out)
	return nil
}
