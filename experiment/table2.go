package experiment

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/metrics"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
)

// The paper's Table 2 on toy data (holdctl experiment nfe): Table2Rows against NFE, each cell a
// sample-quality distance, first with the exact score of the paper's 1-D mixture (OracleTable2), then
// with trained networks (TrainedTable2).

// Table2Config is what every cell of Table 2 shares.
type Table2Config struct {
	NFEs    []int              // the columns: score evaluations per sample, denoising included
	Seed    uint64             // every cell uses it
	Grid    string             // time grid of every row
	Ends    map[string]float64 // end time per SDE kind (hold.DefaultEndTimes, overridden)
	Denoise bool               // the final denoising step, counted in the NFE
	Workers int                // chunks sampled in parallel (oracle table)
}

// NFECell is one measured cell.
type NFECell struct {
	NFE   int     // the budget of the column
	Used  int     // score evaluations the sampler made (≤ NFE: PC takes two per step)
	Steps int     // sampler steps; 0 when the budget is below one step
	Value float64 // NaN: diverged, or no step fits the budget
}

// NFETable is one table (oracle or trained).
type NFETable struct {
	Scores  string // "oracle" or "trained"
	Metric  string // "w1_mixture" or "sliced_w2"
	Caption string
	Rows    []SamplerRow
	NFEs    []int       // the columns
	Cells   [][]NFECell // per row; nil for a row without a model
	Floor   float64
	FloorSD float64
}

// sampleRow draws n samples for each NFE with the row's sampler and returns the cells, measuring the
// data block with dist (NaN when a sample is not finite).
func sampleRow(set Table2Config, row SamplerRow, m *train.Model, n, workers int, dist func(q []float32) (float64, error)) ([]NFECell, error) {
	d := m.Source.Dimension()
	var cells []NFECell
	for _, nfe := range set.NFEs {
		steps, err := sample.StepsFor(row.Method, nfe, set.Denoise)
		cell := NFECell{NFE: nfe, Value: math.NaN()}
		if err != nil {
			cells = append(cells, cell)
			continue
		}
		spec := sample.Spec{Method: row.Method, Steps: steps, Grid: set.Grid, End: set.Ends[row.Kind], Denoise: set.Denoise}
		s, err := spec.Build(m.SDE, m.Score, d)
		if err != nil {
			return nil, fmt.Errorf("%s-%s: %w", row.Model, row.Sampler, err)
		}
		s.Workers = workers
		res, err := s.Sample(n, set.Seed)
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
		q := data.Draw(src, rng.New(sample.ChunkSeed(seed^0xf100, i)), n)
		var err error
		if v[i], err = dist(q); err != nil {
			return 0, 0, err
		}
	}
	st := sample.MeanSE(v)
	return st.Mean, st.SE * math.Sqrt(float64(reps)), nil
}

// OracleTable2 is Table 2 with the exact score of the paper's 1-D mixture: n samples per cell, the
// exact W1 distance to the mixture, and the floor of reps sets of n exact samples.
func OracleTable2(set Table2Config, n, reps int) (*NFETable, error) {
	mix := data.PaperMixture()
	dist := func(q []float32) (float64, error) { return metrics.W1Mixture(q, mix) }
	tab := &NFETable{Scores: "oracle", Metric: "w1_mixture", Rows: Table2Rows, NFEs: set.NFEs,
		Caption: fmt.Sprintf("exact (oracle) scores of the paper's 1-D mixture: W1 ×10³ to the mixture, %d samples per cell, seed %d, %s grid", n, set.Seed, set.Grid)}
	for _, row := range Table2Rows {
		m, err := train.Oracle1D(row.Kind, 0)
		if err != nil {
			return nil, err
		}
		cells, err := sampleRow(set, row, m, n, set.Workers, dist)
		if err != nil {
			return nil, err
		}
		tab.Cells = append(tab.Cells, cells)
	}
	var err error
	tab.Floor, tab.FloorSD, err = floorStat(mix, n, reps, set.Seed, dist)
	return tab, err
}

// TrainedTable2 is Table 2 with trained networks, models by SDE kind (all on the same data; a kind
// without a model has rows of n/a): n samples per cell, the exact W1 for the 1-D mixture and the sliced
// Wasserstein-2 distance to fresh data otherwise, and the floor of reps sets of n exact samples.
func TrainedTable2(set Table2Config, models map[string]*train.Model, n, reps int) (*NFETable, error) {
	var src data.Source
	var names []string
	for _, kind := range hold.Kinds {
		if m := models[kind]; m != nil {
			src = m.Source
			names = append(names, fmt.Sprintf("--%s %s", kind, m.Config.Data))
		}
	}
	tab := &NFETable{Scores: "trained", Rows: Table2Rows, NFEs: set.NFEs}
	var dist func(q []float32) (float64, error)
	if mix, ok := src.(data.Mixture); ok && mix.Dim == 1 {
		tab.Metric = "w1_mixture"
		dist = func(q []float32) (float64, error) { return metrics.W1Mixture(q, mix) }
		tab.Caption = fmt.Sprintf("trained networks (EMA weights) on %s: W1 ×10³ to the mixture, %d samples per cell, seed %d", src.Name(), n, set.Seed)
	} else {
		tab.Metric = "sliced_w2"
		ref := data.Draw(src, rng.New(sample.ChunkSeed(set.Seed^0xda7a, 0)), max(n, 5000))
		d := src.Dimension()
		dist = func(q []float32) (float64, error) { return metrics.SlicedWasserstein(q, ref, d, 2, 256, set.Seed) }
		tab.Caption = fmt.Sprintf("trained networks (EMA weights) on %s: sliced W2 ×10³ (256 projections) to %d fresh data points, %d samples per cell, seed %d",
			src.Name(), len(ref)/d, n, set.Seed)
	}
	tab.Caption += " (" + strings.Join(names, ", ") + ")"
	for _, row := range Table2Rows {
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
	tab.Floor, tab.FloorSD, err = floorStat(src, n, reps, set.Seed, dist)
	return tab, err
}

// WriteMarkdown prints the table with the best cell of each column in bold, and with verdict (the
// oracle table) whether HOLD-LT is the best row at each NFE.
func (tab *NFETable) WriteMarkdown(w io.Writer, verdict bool) {
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

// Table2 computes and prints holdctl experiment nfe's tables: with oracle the oracle table (n samples
// per cell), then with models the trained table (trainedN per cell), reps replicates of the floor
// each. Each table is printed to w as Markdown when it is done, followed by its time in seconds; the
// tables come back for WriteTable2CSV.
func Table2(set Table2Config, models map[string]*train.Model, oracle bool, n, trainedN, reps int, w io.Writer) ([]*NFETable, error) {
	var tables []*NFETable
	if oracle {
		start := time.Now()
		tab, err := OracleTable2(set, n, reps)
		if err != nil {
			return nil, err
		}
		tables = append(tables, tab)
		tab.WriteMarkdown(w, true)
		fmt.Fprintf(w, "(%.0fs)\n\n", time.Since(start).Seconds())
	}
	if len(models) == 0 {
		fmt.Fprintln(w, "No checkpoints given (--hold, --cld, --vp, --ve): only the oracle table.")
		return tables, nil
	}
	start := time.Now()
	tab, err := TrainedTable2(set, models, trainedN, reps)
	if err != nil {
		return nil, err
	}
	tab.WriteMarkdown(w, false)
	fmt.Fprintf(w, "(%.0fs)\n", time.Since(start).Seconds())
	return append(tables, tab), nil
}

// WriteTable2CSV writes every cell of the tables, one per line, and the floors; the error is the
// first write's.
func WriteTable2CSV(w io.Writer, tables []*NFETable) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "scores,model,sampler,nfe,nfe_used,steps,metric,value")
	for _, tab := range tables {
		for i, row := range tab.Rows {
			for _, cl := range tab.Cells[i] {
				fmt.Fprintf(bw, "%s,%s,%s,%d,%d,%d,%s,%s\n", tab.Scores, row.Model, row.Sampler, cl.NFE, cl.Used, cl.Steps, tab.Metric,
					strconv.FormatFloat(cl.Value, 'g', 8, 64))
			}
		}
		fmt.Fprintf(bw, "%s,floor-mean,exact,0,0,0,%s,%s\n", tab.Scores, tab.Metric, strconv.FormatFloat(tab.Floor, 'g', 8, 64))
		fmt.Fprintf(bw, "%s,floor-sd,exact,0,0,0,%s,%s\n", tab.Scores, tab.Metric, strconv.FormatFloat(tab.FloorSD, 'g', 8, 64))
	}
	return bw.Flush()
}

// LoadTable2Models loads the checkpoints of TrainedTable2, ckpts by SDE kind (a kind missing: no model
// of that kind), each checked to be of its kind (train.LoadModelOf) and all on one data set. Every
// error is about the input.
func LoadTable2Models(ckpts map[string]string) (map[string]*train.Model, error) {
	models := map[string]*train.Model{}
	var given []string
	for _, kind := range hold.Kinds {
		ckpt, ok := ckpts[kind]
		if !ok {
			continue
		}
		m, err := train.LoadModelOf(kind, ckpt)
		if err != nil {
			return nil, err
		}
		for _, other := range given {
			o := models[other]
			if o.Config.Data != m.Config.Data || (m.Config.Data == data.NameSwissRoll && o.Config.SwissNoise != m.Config.SwissNoise) {
				return nil, fmt.Errorf("--%s is a model of %s, --%s of %s: the trained table needs one data set",
					kind, m.Config.Data, other, o.Config.Data)
			}
		}
		models[kind] = m
		given = append(given, kind)
	}
	return models, nil
}
