package main

import (
	"fmt"
	"strings"

	"holdgo/data"
	"holdgo/metrics"
)

// prK is the number of nearest neighbours of the improved precision and recall (Kynkäänniemi et
// al. 2019 use 3).
const prK = 3

// prReport is the improved precision and recall of samples against fresh data, next to the same
// for an independent draw of the data of the samples' size (the floor), overall and, for the
// multi Swiss roll, per roll. The JSON keys are stable.
type prReport struct {
	K              int       `json:"k"`
	Precision      float64   `json:"precision"`
	Recall         float64   `json:"recall"`
	FloorPrecision float64   `json:"floor_precision"`
	FloorRecall    float64   `json:"floor_recall"`
	Rolls          []prGroup `json:"per_roll,omitempty"`
}

// prGroup is one roll: precision over the samples attributed to it (nearest centre), recall over
// its data points. A roll without samples has precision 0 and Samples 0.
type prGroup struct {
	Samples        int     `json:"samples"`
	Data           int     `json:"data_points"`
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
	FloorPrecision float64 `json:"floor_precision"`
	FloorRecall    float64 `json:"floor_recall"`
}

// precisionRecall measures gen and floorGen (an independent draw of src, of gen's size) against
// real (fresh points of src), all dim-dimensional.
func precisionRecall(gen, floorGen, real []float32, dim, k int, src data.Source) (*prReport, error) {
	got, err := metrics.PrecisionRecall(real, gen, dim, k)
	if err != nil {
		return nil, err
	}
	floor, err := metrics.PrecisionRecall(real, floorGen, dim, k)
	if err != nil {
		return nil, err
	}
	rep := &prReport{K: k, Precision: got.Precision, Recall: got.Recall, FloorPrecision: floor.Precision, FloorRecall: floor.Recall}
	roll, ok := src.(data.SwissRoll)
	if !ok || dim != 2 {
		return rep, nil
	}
	rolls := func(x []float32) []int {
		out := make([]int, len(x)/2)
		for i := range out {
			out[i] = roll.Roll(float64(x[2*i]), float64(x[2*i+1]))
		}
		return out
	}
	realRoll, genRoll, floorRoll := rolls(real), rolls(gen), rolls(floorGen)
	for r := range roll.Centers {
		var g prGroup
		var p, fp fraction
		var rc, frc fraction
		for i, in := range got.GenIn {
			if genRoll[i] == r {
				p.add(in)
			}
		}
		for i, in := range floor.GenIn {
			if floorRoll[i] == r {
				fp.add(in)
			}
		}
		for i := range realRoll {
			if realRoll[i] == r {
				rc.add(got.RealIn[i])
				frc.add(floor.RealIn[i])
			}
		}
		g.Samples, g.Data = p.n, rc.n
		g.Precision, g.Recall, g.FloorPrecision, g.FloorRecall = p.value(), rc.value(), fp.value(), frc.value()
		rep.Rolls = append(rep.Rolls, g)
	}
	return rep, nil
}

// fraction counts the true verdicts among n.
type fraction struct{ in, n int }

func (f *fraction) add(v bool) {
	f.n++
	if v {
		f.in++
	}
}

func (f fraction) value() float64 {
	if f.n == 0 {
		return 0
	}
	return float64(f.in) / float64(f.n)
}

// text renders the report as rows of samples, floor and their ratio.
func (r *prReport) text() string {
	var b strings.Builder
	row := func(name string, v, floor float64) {
		ratio := "—"
		if floor > 0 {
			ratio = fmt.Sprintf("%.2f", v/floor)
		}
		fmt.Fprintf(&b, "%-40s %12.4f %12.4f %8s\n", name, v, floor, ratio)
	}
	fmt.Fprintf(&b, "%-40s %12s %12s %8s\n", fmt.Sprintf("improved precision/recall (k = %d)", r.K), "samples", "floor", "ratio")
	row("  precision", r.Precision, r.FloorPrecision)
	row("  recall", r.Recall, r.FloorRecall)
	for i, g := range r.Rolls {
		row(fmt.Sprintf("  roll %d precision (%d samples)", i+1, g.Samples), g.Precision, g.FloorPrecision)
		row(fmt.Sprintf("  roll %d recall (%d data points)", i+1, g.Data), g.Recall, g.FloorRecall)
	}
	return b.String()
}
