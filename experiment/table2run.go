package experiment

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"holdgo/hold"
	"holdgo/internal/atomicfile"
	"holdgo/internal/outpath"
	"holdgo/sample"
)

// Table2Run is holdctl experiment nfe after its flags are read: Table 2's cells, tables and file.
type Table2Run struct {
	Set      Table2Config // NFEs, Seed, Grid, Denoise, Workers and Ends (hold.DefaultEndTimes)
	EndTimes []string     // --end-time kind=t, over Set.Ends
	MaxNFE   int          // the largest NFE a cell may take
	Ckpts    map[string]string
	// Oracle adds the table of the exact score; Samples, TrainedSamples and FloorReps are the samples
	// of an oracle cell, of a trained cell and the floor's replicates.
	Oracle                             bool
	Samples, TrainedSamples, FloorReps int
	Out                                string // the CSV file
	Force                              bool   // --force of the output guard
	// Ready runs after every check of the settings, before any model is loaded (nil: nothing).
	Ready func()
}

// ParseEndTimes sets ends[kind] from each "kind=t" of kvs, refusing a kind ends does not hold and a t
// that is not finite and > 0 (the message names cmd).
func ParseEndTimes(cmd string, kvs []string, ends map[string]float64) error {
	for _, kv := range kvs {
		kind, val, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseFloat(val, 64)
		if _, known := ends[kind]; !ok || !known || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return inputErr("%s: --end-time %q: want kind=t with kind hold, cld, vp or ve and a finite t > 0", cmd, kv)
		}
		ends[kind] = v
	}
	return nil
}

// RunTable2 checks r, loads the checkpoints before any sampling (bad input fails fast), prints each
// table of Table2 to w as it is done, writes them as CSV to r.Out and says so on w. Errors of the
// settings and inputs are InputErrors.
func RunTable2(r Table2Run, w io.Writer) error {
	set := r.Set
	if len(set.NFEs) == 0 {
		return inputErr("experiment nfe: --nfe needs at least one value")
	}
	for _, n := range set.NFEs {
		if n < 3 {
			return inputErr("experiment nfe: --nfe %d < 3", n)
		}
	}
	if !slices.Contains(sample.GridKinds, set.Grid) {
		return inputErr("experiment nfe: unknown grid %q (want %s)", set.Grid, strings.Join(sample.GridKinds, ", "))
	}
	if err := ParseEndTimes("experiment nfe", r.EndTimes, set.Ends); err != nil {
		return err
	}
	out := r.Out
	if !strings.HasSuffix(out, ".csv") {
		return inputErr("experiment nfe: --out %s: want a .csv file", out)
	}
	if err := outpath.DirExists(out); err != nil {
		return inputErr("experiment nfe: --out %s: %v", out, err)
	}
	for _, n := range set.NFEs {
		if n < 1 || n > r.MaxNFE {
			return inputErr("experiment nfe: --nfe %d: want 1 … %d", n, r.MaxNFE)
		}
	}
	guard := outpath.New(r.Force)
	for _, kind := range hold.Kinds {
		guard.Input(r.Ckpts[kind])
	}
	if err := guard.CheckAll(outpath.Output{Flag: "out", Path: out, Kind: outpath.Text}); err != nil {
		return asInput(err)
	}
	if r.Ready != nil {
		r.Ready()
	}
	models, err := LoadTable2Models(r.Ckpts)
	if err != nil {
		return inputErr("experiment nfe: %v", err)
	}
	if !r.Oracle && len(models) == 0 {
		return inputErr("experiment nfe: --no-oracle needs checkpoints (--hold, --cld, --vp, --ve)")
	}
	tables, err := Table2(set, models, r.Oracle, r.Samples, r.TrainedSamples, r.FloorReps, w)
	if err != nil {
		return fmt.Errorf("experiment nfe: %w", err)
	}
	if err := atomicfile.Write(out, func(f io.Writer) error { return WriteTable2CSV(f, tables) }); err != nil {
		return fmt.Errorf("experiment nfe: write %s: %w", out, err)
	}
	fmt.Fprintf(w, "wrote %s\n", out)
	return nil
}
