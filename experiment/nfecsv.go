package experiment

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"

	"holdgo/internal/budget"
	"holdgo/plot"
)

// maxNFECSVRows bounds what ReadNFECSV accepts: a study has hundreds of rows, not millions.
const maxNFECSVRows = 1 << 20

// ReadNFECSVFile is ReadNFECSV of the file path, read within the memory budget; an error of its
// content names the file.
func ReadNFECSVFile(path, metric, grid string) ([]plot.Series, string, error) {
	raw, err := budget.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	series, name, err := ReadNFECSV(bytes.NewReader(raw), metric, grid)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return series, name, nil
}

// ReadNFECSV turns the CSV of experiment samplers (WriteCSV: the metric column metric, each sampler's
// best grid at each NFE or only grid) or of experiment nfe (WriteTable2CSV) into one series per sampler
// (NFE ascending) plus the floor, and names the metric plotted.
func ReadNFECSV(r io.Reader, metric, grid string) ([]plot.Series, string, error) {
	cr := csv.NewReader(r)
	header, err := cr.Read()
	if err != nil {
		return nil, "", fmt.Errorf("no CSV header: %v", err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[h] = i
	}
	need := func(names ...string) error {
		for _, n := range names {
			if _, ok := col[n]; !ok {
				return fmt.Errorf("no column %q in the header %v", n, header)
			}
		}
		return nil
	}
	// key: the line's name; value and nfe: which columns hold them.
	var key func(rec []string) string
	valueCol := ""
	switch _, isNFETable := col["model"]; {
	case isNFETable: // experiment nfe
		if err := need("sampler", "nfe", "metric", "value"); err != nil {
			return nil, "", err
		}
		key = func(rec []string) string { return rec[col["model"]] + " " + rec[col["sampler"]] }
		valueCol = "value"
	default: // experiment samplers
		if err := need("sampler", "nfe", metric); err != nil {
			return nil, "", err
		}
		key = func(rec []string) string { return rec[col["sampler"]] }
		valueCol = metric
	}
	best := map[string]map[float64]float64{} // line → nfe → value
	var order []string
	floor := math.NaN()
	firstUndrawn := "" // the first sampler value a log axis cannot draw (0 or NaN), for the error below
	for row := 2; ; row++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, "", err
		}
		if row > maxNFECSVRows {
			return nil, "", fmt.Errorf("more than %d rows: not a sampler study", maxNFECSVRows)
		}
		name := key(rec)
		text := rec[col[valueCol]]
		v, err := strconv.ParseFloat(text, 64)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return nil, "", fmt.Errorf("row %d: %s %s is beyond float64's range: want a finite value ≥ 0 (or NaN for a run that diverged)", row, valueCol, text)
		case err != nil:
			return nil, "", fmt.Errorf("row %d: %s %q is not a number", row, valueCol, text)
		}
		// Every metric of a study (W1, its SD, width ratio and deviation) is ≥ 0 or NaN, which marks
		// a run that diverged. A negative or infinite value is not a study's: refused, naming it (it
		// was dropped silently, or ended in "no sampler with a finite positive" value that did not
		// say which). A zero is a study's (an SD of one seed) that a log axis cannot draw: left out,
		// as NaN is, and named if nothing drawable remains.
		if v < 0 || math.IsInf(v, 0) {
			return nil, "", fmt.Errorf("row %d: %s %s: want a finite value ≥ 0 (or NaN for a run that diverged) to draw on a log axis", row, valueCol, text)
		}
		if i, ok := col["metric"]; ok && valueCol == "value" && metric == "w1" {
			metric = rec[i] // experiment nfe names its metric per row
		}
		switch {
		case slices.Contains([]string{"floor-mean", "floor-mean exact"}, name):
			floor = v
			continue
		case name == "floor-sd" || name == "floor-sd exact":
			continue
		}
		if g, ok := col["grid"]; ok && grid != "best" && rec[g] != grid {
			continue
		}
		if e, ok := col["error"]; ok && rec[e] != "" { // a run that failed (experiment samplers)
			continue
		}
		nfe, err := strconv.ParseFloat(rec[col["nfe"]], 64)
		if err != nil || !(nfe >= 1) || math.IsInf(nfe, 0) {
			return nil, "", fmt.Errorf("row %d: nfe %s: want a finite number of score evaluations, at least 1", row, strconv.Quote(rec[col["nfe"]]))
		}
		if !(v > 0) && firstUndrawn == "" {
			firstUndrawn = fmt.Sprintf("row %d: %s", row, text)
		}
		if best[name] == nil {
			best[name] = map[float64]float64{}
			order = append(order, name)
		}
		if old, ok := best[name][nfe]; !ok || v < old || math.IsNaN(old) {
			best[name][nfe] = v
		}
	}
	if len(order) == 0 {
		if grid != "best" {
			return nil, "", fmt.Errorf("no rows with grid %q", grid)
		}
		return nil, "", fmt.Errorf("no sampler rows")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	series := make([]plot.Series, 0, len(order)+1)
	for _, name := range order {
		s := plot.Series{Name: name}
		for nfe, v := range best[name] {
			if v > 0 && !math.IsInf(v, 0) { // NaN: diverged; a log axis takes positive values only
				s.X = append(s.X, nfe)
			}
		}
		if len(s.X) == 0 { // diverged or failed at every NFE: no line
			continue
		}
		slices.Sort(s.X)
		for _, nfe := range s.X {
			s.Y = append(s.Y, best[name][nfe])
		}
		lo, hi = min(lo, s.X[0]), max(hi, s.X[len(s.X)-1])
		series = append(series, s)
	}
	if len(series) == 0 {
		return nil, "", fmt.Errorf("no sampler with a finite positive %s (the first value: %s)", metric, firstUndrawn)
	}
	if floor > 0 {
		series = append(series, plot.Series{Name: "Monte-Carlo floor", X: []float64{lo, hi}, Y: []float64{floor, floor}})
	}
	return series, metric, nil
}
