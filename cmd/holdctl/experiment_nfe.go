package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
	"holdgo/metrics"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// nfeRow is one row of the paper's Table 2: an SDE and its sampler.
type nfeRow struct {
	Model, Sampler string // as the paper prints them
	Kind, Method   string // hold kind and sample.Registry name
}

// nfeRows are the rows of the paper's Table 2.
var nfeRows = []nfeRow{
	{"HOLD", "LT", hold.KindHOLD, "lt"},
	{"HOLD", "EM", hold.KindHOLD, "em"},
	{"CLD", "SSCS", hold.KindCLD, "lt"}, // Lie–Trotter on CLD is CLD-SGM's SSCS
	{"VP", "EM", hold.KindVP, "em"},
	{"VE", "PC", hold.KindVE, "pc"},
	// beyond the paper: the x̂₀ exponential integrators on every SDE (docs/samplers.md)
	{"HOLD", "x̂₀-DDIM", hold.KindHOLD, "xddim"},
	{"HOLD", "x̂₀-DPM 2M", hold.KindHOLD, "xdpm2"},
	{"HOLD", "x̂₀-DPM 3M", hold.KindHOLD, "xdpm3"},
	{"CLD", "gDDIM-style x̂₀ 2M", hold.KindCLD, "xdpm2"},
	{"VP", "DDIM", hold.KindVP, "xddim"},
	{"VP", "DPM-Solver++ 2M", hold.KindVP, "xdpm2"},
	{"VP", "DPM-Solver++ 3M", hold.KindVP, "xdpm3"},
}

// nfeKinds are the SDE kinds of the rows, in flag order.
var nfeKinds = []string{hold.KindHOLD, hold.KindCLD, hold.KindVP, hold.KindVE}

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

// nfeCell is one measured cell.
type nfeCell struct {
	NFE   int     // the budget of the column
	Used  int     // score evaluations the sampler made (≤ NFE: PC takes two per step)
	Steps int     // sampler steps; 0 when the budget is below one step
	Value float64 // NaN: diverged, or no step fits the budget
}

// nfeTable is one table (oracle or trained).
type nfeTable struct {
	Scores  string // "oracle" or "trained"
	Metric  string // "w1_mixture" or "sliced_w2"
	Caption string
	Rows    []nfeRow
	NFEs    []int       // the columns
	Cells   [][]nfeCell // per row; nil for a row without a model
	Floor   float64
	FloorSD float64
}

// nfeSetup is what every cell shares.
type nfeSetup struct {
	nfes    []int
	seed    uint64
	grid    string
	ends    map[string]float64
	denoise bool
	workers int
}

func runExperimentNFE(c *cli.Context) error {
	if c.NArg() > 0 {
		return usageErr("experiment nfe takes no arguments, got %q", c.Args().First())
	}
	set := nfeSetup{nfes: c.IntSlice("nfe"), seed: c.Uint64("seed"), grid: c.String("grid"), denoise: !c.Bool("no-denoise"),
		workers: c.Int("workers"), ends: map[string]float64{hold.KindHOLD: 1e-3, hold.KindCLD: 1e-3, hold.KindVP: 1e-5, hold.KindVE: 1e-5}}
	if len(set.nfes) == 0 {
		return usageErr("experiment nfe: --nfe needs at least one value")
	}
	for _, n := range set.nfes {
		if n < 3 {
			return usageErr("experiment nfe: --nfe %d < 3", n)
		}
	}
	if !slices.Contains(sample.GridKinds, set.grid) {
		return usageErr("experiment nfe: unknown grid %q (want %s)", set.grid, strings.Join(sample.GridKinds, ", "))
	}
	for _, kv := range c.StringSlice("end-time") {
		kind, val, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseFloat(val, 64)
		if _, known := set.ends[kind]; !ok || !known || err != nil || !(v > 0) {
			return usageErr("experiment nfe: --end-time %q: want kind=t with kind hold, cld, vp or ve and t > 0", kv)
		}
		set.ends[kind] = v
	}
	if c.Int("samples") < 2 || c.Int("trained-samples") < 2 || c.Int("floor-reps") < 1 || set.workers < 1 {
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
	models := map[string]*train.Model{}
	var given []string
	for _, kind := range nfeKinds {
		if !c.IsSet(kind) {
			continue
		}
		m, err := train.LoadModelOf(kind, c.String(kind))
		if err != nil {
			return usageErr("experiment nfe: %v", err)
		}
		for _, other := range given {
			o := models[other]
			if o.Config.Data != m.Config.Data || (m.Config.Data == data.NameSwissRoll && o.Config.SwissNoise != m.Config.SwissNoise) {
				return usageErr("experiment nfe: --%s is a model of %s, --%s of %s: the trained table needs one data set",
					kind, m.Config.Data, other, o.Config.Data)
			}
		}
		models[kind] = m
		given = append(given, kind)
	}
	if c.Bool("no-oracle") && len(models) == 0 {
		return usageErr("experiment nfe: --no-oracle needs checkpoints (--hold, --cld, --vp, --ve)")
	}
	w := c.App.Writer
	var tables []*nfeTable
	if !c.Bool("no-oracle") {
		start := time.Now()
		tab, err := oracleNFETable(set, c.Int("samples"), c.Int("floor-reps"))
		if err != nil {
			return fmt.Errorf("experiment nfe: %w", err)
		}
		tables = append(tables, tab)
		writeNFEMarkdown(w, tab, true)
		fmt.Fprintf(w, "(%.0fs)\n\n", time.Since(start).Seconds())
	}
	if len(models) == 0 {
		fmt.Fprintln(w, "No checkpoints given (--hold, --cld, --vp, --ve): only the oracle table.")
	} else {
		start := time.Now()
		tab, err := trainedNFETable(set, models, c.Int("trained-samples"), c.Int("floor-reps"))
		if err != nil {
			return fmt.Errorf("experiment nfe: %w", err)
		}
		tables = append(tables, tab)
		writeNFEMarkdown(w, tab, false)
		fmt.Fprintf(w, "(%.0fs)\n", time.Since(start).Seconds())
	}
	var csv bytes.Buffer
	writeNFECSV(&csv, tables)
	if err := atomicfile.WriteFile(out, csv.Bytes()); err != nil {
		return fmt.Errorf("experiment nfe: write %s: %w", out, err)
	}
	fmt.Fprintf(w, "wrote %s\n", out)
	return nil
}

// sampleRow draws n samples for each NFE with the row's sampler and returns the cells, measuring the
// data block with dist (NaN when a sample is not finite).
func sampleRow(set nfeSetup, row nfeRow, m *train.Model, n, workers int, dist func(q []float32) (float64, error)) ([]nfeCell, error) {
	d := m.Source.Dimension()
	var cells []nfeCell
	for _, nfe := range set.nfes {
		steps, err := sample.StepsFor(row.Method, nfe, set.denoise)
		cell := nfeCell{NFE: nfe, Value: math.NaN()}
		if err != nil {
			cells = append(cells, cell)
			continue
		}
		spec := sample.Spec{Method: row.Method, Steps: steps, Grid: set.grid, End: set.ends[row.Kind], Denoise: set.denoise}
		s, err := spec.Build(m.SDE, m.Score, d)
		if err != nil {
			return nil, fmt.Errorf("%s-%s: %w", row.Model, row.Sampler, err)
		}
		s.Workers = workers
		res, err := s.Sample(n, set.seed)
		if err != nil {
			return nil, fmt.Errorf("%s-%s at NFE %d: %w", row.Model, row.Sampler, nfe, err)
		}
		cell.Used, cell.Steps = res.NFE, steps
		q := sample.FirstBlock(res.X, n, m.SDE.Blocks(), d)
		finite := true
		for _, v := range q {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				finite = false
				break
			}
		}
		if finite {
			if cell.Value, err = dist(q); err != nil {
				return nil, err
			}
		}
		cells = append(cells, cell)
	}
	return cells, nil
}

// floorStat is the mean and standard deviation of dist over reps exact draws of n points.
func floorStat(src data.Source, n, reps int, seed uint64, dist func(q []float32) (float64, error)) (float64, float64, error) {
	v := make([]float64, reps)
	for i := range v {
		q := data.Draw(src, tensor.NewRNG(sample.ChunkSeed(seed^0xf100, i)), n)
		var err error
		if v[i], err = dist(q); err != nil {
			return 0, 0, err
		}
	}
	st := sample.MeanSE(v)
	return st.Mean, st.SE * math.Sqrt(float64(reps)), nil
}

func oracleNFETable(set nfeSetup, n, reps int) (*nfeTable, error) {
	mix := data.PaperMixture()
	dist := func(q []float32) (float64, error) { return metrics.W1Mixture(q, mix) }
	tab := &nfeTable{Scores: "oracle", Metric: "w1_mixture", Rows: nfeRows, NFEs: set.nfes,
		Caption: fmt.Sprintf("exact (oracle) scores of the paper's 1-D mixture: W1 ×10³ to the mixture, %d samples per cell, seed %d, %s grid", n, set.seed, set.grid)}
	for _, row := range nfeRows {
		m, err := train.Oracle1D(row.Kind, 0)
		if err != nil {
			return nil, err
		}
		cells, err := sampleRow(set, row, m, n, set.workers, dist)
		if err != nil {
			return nil, err
		}
		tab.Cells = append(tab.Cells, cells)
	}
	var err error
	tab.Floor, tab.FloorSD, err = floorStat(mix, n, reps, set.seed, dist)
	return tab, err
}

func trainedNFETable(set nfeSetup, models map[string]*train.Model, n, reps int) (*nfeTable, error) {
	var src data.Source
	var names []string
	for _, kind := range nfeKinds {
		if m := models[kind]; m != nil {
			src = m.Source
			names = append(names, fmt.Sprintf("--%s %s", kind, m.Config.Data))
		}
	}
	tab := &nfeTable{Scores: "trained", Rows: nfeRows, NFEs: set.nfes}
	var dist func(q []float32) (float64, error)
	if mix, ok := src.(data.Mixture); ok && mix.Dim == 1 {
		tab.Metric = "w1_mixture"
		dist = func(q []float32) (float64, error) { return metrics.W1Mixture(q, mix) }
		tab.Caption = fmt.Sprintf("trained networks (EMA weights) on %s: W1 ×10³ to the mixture, %d samples per cell, seed %d", src.Name(), n, set.seed)
	} else {
		tab.Metric = "sliced_w2"
		ref := data.Draw(src, tensor.NewRNG(sample.ChunkSeed(set.seed^0xda7a, 0)), max(n, 5000))
		d := src.Dimension()
		dist = func(q []float32) (float64, error) { return metrics.SlicedWasserstein(q, ref, d, 2, 256, set.seed) }
		tab.Caption = fmt.Sprintf("trained networks (EMA weights) on %s: sliced W2 ×10³ (256 projections) to %d fresh data points, %d samples per cell, seed %d",
			src.Name(), len(ref)/d, n, set.seed)
	}
	tab.Caption += " (" + strings.Join(names, ", ") + ")"
	for _, row := range nfeRows {
		m := models[row.Kind]
		if m == nil {
			tab.Cells = append(tab.Cells, nil)
			continue
		}
		cells, err := sampleRow(set, row, m, n, 1, dist)
		if err != nil {
			return nil, err
		}
		tab.Cells = append(tab.Cells, cells)
	}
	var err error
	tab.Floor, tab.FloorSD, err = floorStat(src, n, reps, set.seed, dist)
	return tab, err
}

// writeNFEMarkdown prints the table with the best cell of each column in bold, and for the oracle
// table whether HOLD-LT is the best row at each NFE.
func writeNFEMarkdown(w io.Writer, tab *nfeTable, verdict bool) {
	fmt.Fprintf(w, "Table 2 on toy data, %s\n\n", tab.Caption)
	nfes := tab.NFEs
	fmt.Fprint(w, "| Model | Sampler |")
	for _, n := range nfes {
		fmt.Fprintf(w, " NFE %d |", n)
	}
	fmt.Fprint(w, "\n|---|---|"+strings.Repeat("---:|", len(nfes))+"\n")
	best := make([]int, len(nfes))
	for j := range nfes {
		best[j] = -1
		for i, cells := range tab.Cells {
			if cells != nil && !math.IsNaN(cells[j].Value) && (best[j] < 0 || cells[j].Value < tab.Cells[best[j]][j].Value) {
				best[j] = i
			}
		}
	}
	for i, row := range tab.Rows {
		fmt.Fprintf(w, "| %s | %s |", row.Model, row.Sampler)
		for j := range nfes {
			switch cells := tab.Cells[i]; {
			case cells == nil:
				fmt.Fprint(w, " n/a |")
			case cells[j].Steps == 0:
				fmt.Fprint(w, " — |")
			case math.IsNaN(cells[j].Value):
				fmt.Fprint(w, " diverged |")
			case best[j] == i:
				fmt.Fprintf(w, " **%.2f** |", 1e3*cells[j].Value)
			default:
				fmt.Fprintf(w, " %.2f |", 1e3*cells[j].Value)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "| exact data samples (floor) | |%s\n\n", strings.Repeat(fmt.Sprintf(" %.2f ± %.2f |", 1e3*tab.Floor, 1e3*tab.FloorSD), len(nfes)))
	if !verdict {
		return
	}
	for j, n := range nfes {
		if best[j] < 0 {
			continue
		}
		b := tab.Rows[best[j]]
		if best[j] == 0 {
			fmt.Fprintf(w, "NFE %d: HOLD-LT is the best row.\n", n)
		} else {
			fmt.Fprintf(w, "NFE %d: HOLD-LT is not the best row (best: %s-%s).\n", n, b.Model, b.Sampler)
		}
	}
}

// writeNFECSV writes every cell of the tables, one per line, and the floors.
func writeNFECSV(w io.Writer, tables []*nfeTable) {
	fmt.Fprintln(w, "scores,model,sampler,nfe,nfe_used,steps,metric,value")
	for _, tab := range tables {
		for i, row := range tab.Rows {
			for _, cl := range tab.Cells[i] {
				fmt.Fprintf(w, "%s,%s,%s,%d,%d,%d,%s,%s\n", tab.Scores, row.Model, row.Sampler, cl.NFE, cl.Used, cl.Steps, tab.Metric,
					strconv.FormatFloat(cl.Value, 'g', 8, 64))
			}
		}
		fmt.Fprintf(w, "%s,floor-mean,exact,0,0,0,%s,%s\n", tab.Scores, tab.Metric, strconv.FormatFloat(tab.Floor, 'g', 8, 64))
		fmt.Fprintf(w, "%s,floor-sd,exact,0,0,0,%s,%s\n", tab.Scores, tab.Metric, strconv.FormatFloat(tab.FloorSD, 'g', 8, 64))
	}
}
