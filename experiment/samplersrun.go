package experiment

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
)

// MaxNFE bounds the NFE of a study cell.
const MaxNFE = 1 << 20

// SamplersRun is holdctl experiment samplers after its flags are read: the W1-vs-NFE study of the
// samplers on the paper's 1-D mixture (MixtureStudy) or, with Data, on the empirical oracle of images
// (ImageStudyData).
type SamplersRun struct {
	Format    string // markdown or csv (the image study writes Markdown whatever it is)
	NFEs      []int
	Grids     []string // the image study takes the first
	Samplers  []string
	ODETols   []float64
	NoDenoise bool
	EndTimes  []string // kind=t
	Samples   int
	Seed      uint64
	Seeds     int
	SigmaMin  float64
	FloorReps int
	Workers   int
	Data      string // image data of the empirical oracle ("": the 1-D mixture)
	OracleN   int    // images in the empirical oracle
	Out       string // the table's file ("": w)
	Force     bool   // --force of the output guard
}

// RunSamplers checks the settings and the output, runs the study and writes its table to r.Out or w.
// Errors of the parameters are *ParamErrors, of the memory budget and the output InputErrors; a study
// of which every run failed (the table written) is an error too.
func RunSamplers(r SamplersRun, w io.Writer) error {
	if r.Format != "markdown" && r.Format != "csv" {
		return &ParamError{fmt.Errorf("unknown format %q (want markdown or csv)", r.Format)}
	}
	if err := budget.CheckCount(int64(r.Samples)*int64(r.FloorReps), 8*4, "--samples"); err != nil {
		return &InputError{err}
	}
	for _, n := range r.NFEs {
		if n < 2 || n > MaxNFE {
			return &ParamError{fmt.Errorf("NFE %d: want 2 … %d", n, MaxNFE)}
		}
	}
	for _, tol := range r.ODETols {
		if !(tol > 0 && tol < 1) { // NaN and negative tolerances failed every ODE run (exit 1), 0 ran the default
			return &ParamError{fmt.Errorf("--ode-tols %v: want tolerances in (0, 1)", tol)}
		}
	}
	guard := outpath.New(r.Force)
	guard.Data(r.Data)
	if err := guard.CheckAll(outpath.Output{Flag: "out", Path: r.Out, Kind: outpath.Text}); err != nil {
		return &InputError{err}
	}
	ends := map[string]float64{}
	for _, kv := range r.EndTimes {
		kind, val, ok := strings.Cut(kv, "=")
		v, err := strconv.ParseFloat(val, 64)
		if !ok || err != nil || !(v > 0) || math.IsInf(v, 0) {
			return &ParamError{fmt.Errorf("end time %q: want kind=t with a finite t > 0", kv)}
		}
		ends[kind] = v
	}
	if r.Data != "" { // the empirical oracle of the first OracleN images, Samples samples per cell on the first grid; Markdown only
		tab, err := ImageStudyData(r.Data, r.OracleN, ImageStudyConfig{Samplers: r.Samplers, NFEs: r.NFEs, Grid: r.Grids[0],
			Samples: r.Samples, Seed: r.Seed, EndTime: ends, Workers: r.Workers})
		if err != nil {
			return err
		}
		return WriteStudy(r.Out, w, tab.WriteMarkdown)
	}
	tab, err := MixtureStudy(StudyConfig{NFEs: r.NFEs, Grids: r.Grids, Samplers: r.Samplers, ODETols: r.ODETols,
		Samples: r.Samples, Seed: r.Seed, Seeds: r.Seeds, NoDenoise: r.NoDenoise, EndTime: ends, FloorReps: r.FloorReps,
		Workers: r.Workers, SigmaMin: r.SigmaMin})
	if err != nil {
		return err
	}
	err = WriteStudy(r.Out, w, func(w io.Writer) error {
		if r.Format == "csv" {
			return tab.WriteCSV(w)
		}
		return tab.WriteMarkdown(w)
	})
	if err != nil {
		return err
	}
	if failed, total := tab.Failures(); failed > 0 && failed == total {
		return fmt.Errorf("every run failed (%d); the first: %s", total, tab.FirstFailure())
	}
	return nil
}

// WriteStudy writes a study's table to path atomically (checked by the output guard before the study
// ran), or to w when path is "".
func WriteStudy(path string, w io.Writer, write func(io.Writer) error) error {
	if path == "" {
		if err := write(w); err != nil {
			return fmt.Errorf("write: %w", err)
		}
		return nil
	}
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
