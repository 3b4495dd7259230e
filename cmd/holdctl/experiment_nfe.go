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
	return &cli.Command{
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
			&cli.IntFlag{Name: "samples", Value: 20000, Usage: "samples per oracle cell"},
			&cli.IntFlag{Name: "trained-samples", Value: 2000, Usage: "samples per trained-model cell"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed (every cell uses it)"},
			&cli.StringFlag{Name: "grid", Value: sample.GridQuadratic, Usage: "time grid of every row: uniform, quadratic, geometric, logsnr or edm"},
			&cli.StringSliceFlag{Name: "end-time", Usage: "end time per SDE as kind=t (defaults hold=1e-3, cld=1e-3, vp=1e-5, ve=1e-5)"},
			&cli.BoolFlag{Name: "no-denoise", Usage: "drop the final denoising step"},
			&cli.StringFlag{Name: "hold", Usage: "HOLD checkpoint (run directory) for the trained table"},
			&cli.StringFlag{Name: "cld", Usage: "CLD checkpoint"},
			&cli.StringFlag{Name: "vp", Usage: "VP checkpoint"},
			&cli.StringFlag{Name: "ve", Usage: "VE checkpoint"},
			&cli.BoolFlag{Name: "no-oracle", Usage: "skip the oracle table"},
			&cli.IntFlag{Name: "floor-reps", Value: 5, Usage: "replicates of exact samples for the floor"},
			&cli.IntFlag{Name: "workers", Value: 1, Usage: "chunks sampled in parallel (oracle table)"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads of the networks (default: all cores)"},
			&cli.StringFlag{Name: "out", Value: "table2.csv", Usage: "CSV output file"},
			forceFlag(),
		},
		Action: runExperimentNFE,
	}
}

func runExperimentNFE(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("experiment nfe takes no arguments, got %q", c.Args().First())
	}
	set := experiment.Table2Config{NFEs: c.IntSlice("nfe"), Seed: c.Uint64("seed"), Grid: c.String("grid"), Denoise: !c.Bool("no-denoise"),
		Workers: c.Int("workers"), Ends: hold.DefaultEndTimes()}
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
	if c.Int("samples") < 2 || c.Int("trained-samples") < 2 || c.Int("floor-reps") < 1 || set.Workers < 1 {
		return usageErr("experiment nfe: --samples and --trained-samples must be ≥ 2, --floor-reps and --workers ≥ 1")
	}
	out := c.String("out")
	if !strings.HasSuffix(out, ".csv") {
		return usageErr("experiment nfe: --out %s: want a .csv file", out)
	}
	if err := checkWritableDir(out); err != nil {
		return usageErr("experiment nfe: --out %s: %v", out, err)
	}
	if err := checkInts(c, intRange{name: "samples", lo: 2, hi: 1 << 24}, intRange{name: "trained-samples", lo: 2, hi: 1 << 24},
		intRange{name: "floor-reps", lo: 1, hi: 1000}, intRange{name: "workers", lo: 1, hi: maxThreads}); err != nil {
		return err
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
	if err := setThreads(c); err != nil {
		return err
	}
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
	tables, err := experiment.Table2(set, models, !c.Bool("no-oracle"), c.Int("samples"), c.Int("trained-samples"), c.Int("floor-reps"), w)
	if err != nil {
		return fmt.Errorf("experiment nfe: %w", err)
	}
	if err := atomicfile.Write(out, func(f io.Writer) error { return experiment.WriteTable2CSV(f, tables) }); err != nil {
		return fmt.Errorf("experiment nfe: write %s: %w", out, err)
	}
	fmt.Fprintf(w, "wrote %s\n", out)
	return nil
}
