package metrics

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"holdgo/data"
	"holdgo/rng"
)

// holdctl eval's measures: distances between samples and fresh data next to the floor of an
// independent draw of the data, the exact W1 and mode weights of the 1-D mixture, and the improved
// precision and recall overall and per roll of the multi Swiss roll.

// EvalReport is the result of Eval (holdctl eval); the JSON keys are stable.
type EvalReport struct {
	Samples     string       `json:"samples"`
	Points      int          `json:"points"`
	Dim         int          `json:"dim"`
	Data        string       `json:"data"`
	DataPoints  int          `json:"data_points"`
	Seed        uint64       `json:"seed"`
	SW2         float64      `json:"sliced_w2"`
	MMD2        float64      `json:"mmd2"`
	Bandwidth   float64      `json:"mmd_bandwidth"`
	Energy      float64      `json:"energy"`
	FloorSW2    float64      `json:"floor_sliced_w2"`
	FloorMMD2   float64      `json:"floor_mmd2"`
	FloorEnergy float64      `json:"floor_energy"`
	W1          *float64     `json:"w1_mixture,omitempty"`
	FloorW1     *float64     `json:"floor_w1_mixture,omitempty"`
	ModeWeights []float64    `json:"mode_weights,omitempty"`
	TrueWeights []float64    `json:"true_mode_weights,omitempty"`
	PR          *RollsReport `json:"precision_recall,omitempty"`
}

// strided returns at most k points of x (n × dim), evenly strided.
func strided(x []float32, dim, k int) []float32 {
	n := len(x) / dim
	if n <= k {
		return x
	}
	out := make([]float32, 0, k*dim)
	for i := range k {
		r := i * n / k
		out = append(out, x[r*dim:(r+1)*dim]...)
	}
	return out
}

// distances are the sample-to-sample distances between x and y.
type distances struct{ sw2, mmd2, sigma, energy float64 }

// measure is the sliced Wasserstein-2 distance (projections directions) and, on at most kernelPoints
// points of each set, the squared MMD of median-heuristic bandwidth and the energy distance.
func measure(x, y []float32, dim, kernelPoints, projections int, seed uint64) (distances, error) {
	var d distances
	var err error
	if d.sw2, err = SlicedWasserstein(x, y, dim, 2, projections, seed); err != nil {
		return d, err
	}
	xs, ys := strided(x, dim, kernelPoints), strided(y, dim, kernelPoints)
	if d.sigma, err = MedianBandwidth(xs, ys, dim); err != nil {
		return d, err
	}
	if d.mmd2, err = MMDWithBandwidth(xs, ys, dim, d.sigma); err != nil {
		return d, err
	}
	if d.energy, err = EnergyDistance(xs, ys, dim); err != nil {
		return d, err
	}
	return d, nil
}

// EvalOptions configures Eval.
type EvalOptions struct {
	Samples      string // the samples' name in the report (a file)
	N            int    // fresh data points to compare with
	KernelPoints int    // points of each set for MMD and the energy distance (O(n²))
	Projections  int    // directions of the sliced Wasserstein distance
	PRK          int    // nearest neighbours of the precision and recall (0: skip them)
	Seed         uint64 // seed of the fresh data and the projections
}

// ReadSamples reads the samples of a .npy file of points (n, d) to compare with src: d must be src's
// dimension and, when prk > 0 (the neighbours of the precision and recall), n must exceed prk.
func ReadSamples(path string, src data.Source, prk int) ([]float32, int, error) {
	x, dim, err := data.ReadPoints(path)
	if err != nil {
		return nil, 0, err
	}
	if dim != src.Dimension() {
		return nil, 0, fmt.Errorf("%s holds %d-D points, the data %s is %d-D", path, dim, src.Name(), src.Dimension())
	}
	if prk > 0 && prk >= len(x)/dim {
		return nil, 0, fmt.Errorf("--pr-k %d needs more than %d samples, the file has %d", prk, prk, len(x)/dim)
	}
	return x, dim, nil
}

// Eval compares the samples x (dim-dimensional) with src: distances to N fresh points of src next to
// the same for an independent draw of src of the samples' size (the floor); for the 1-D mixture the
// exact W1 and the share of samples per mode; and the improved precision and recall (PRK > 0, which
// must be below the number of samples).
func Eval(x []float32, dim int, src data.Source, opt EvalOptions) (*EvalReport, error) {
	n, seed := opt.N, opt.Seed
	r := rng.New(seed)
	fresh, fresh2 := data.Draw(src, r, n), data.Draw(src, r, len(x)/dim)
	rep := &EvalReport{Samples: opt.Samples, Points: len(x) / dim, Dim: dim, Data: src.Name(), DataPoints: n, Seed: seed}
	got, err := measure(x, fresh, dim, opt.KernelPoints, opt.Projections, seed)
	if err != nil {
		return nil, err
	}
	floor, err := measure(fresh2, fresh, dim, opt.KernelPoints, opt.Projections, seed)
	if err != nil {
		return nil, err
	}
	rep.SW2, rep.MMD2, rep.Bandwidth, rep.Energy = got.sw2, got.mmd2, got.sigma, got.energy
	rep.FloorSW2, rep.FloorMMD2, rep.FloorEnergy = floor.sw2, floor.mmd2, floor.energy
	if mix, ok := src.(data.Mixture); ok && mix.Dim == 1 {
		w1, err := W1Mixture(x, mix)
		if err != nil {
			return nil, err
		}
		fw1, err := W1Mixture(fresh2, mix)
		if err != nil {
			return nil, err
		}
		rep.W1, rep.FloorW1 = &w1, &fw1
		if rep.ModeWeights, err = ModeWeights(x, mix); err != nil {
			return nil, err
		}
		var sum float64
		for _, w := range mix.Weights {
			sum += w
		}
		for _, w := range mix.Weights {
			rep.TrueWeights = append(rep.TrueWeights, w/sum)
		}
	}
	if opt.PRK > 0 {
		if rep.PR, err = SamplePrecisionRecall(x, fresh2, fresh, dim, opt.PRK, src); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// Write prints the report as one JSON object, or as WriteText's table for proj projections and at
// most kernelPoints points of each set in the kernel distances.
func (r EvalReport) Write(w io.Writer, asJSON bool, proj, kernelPoints int) error {
	if asJSON {
		return json.NewEncoder(w).Encode(r)
	}
	return r.WriteText(w, proj, min(kernelPoints, r.Points), min(kernelPoints, r.DataPoints))
}

// WriteText prints the report as a table of samples and floor; proj, kx and ky are the projections and
// the points of each set the kernel distances used, for the row names.
func (r EvalReport) WriteText(w io.Writer, proj, kx, ky int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d points of dimension %d against %d fresh points of %s (seed %d)\n", r.Samples, r.Points, r.Dim, r.DataPoints, r.Data, r.Seed)
	fmt.Fprintf(&b, "%-40s %12s %12s\n", "", "samples", "floor")
	row := func(name string, v, floor float64) { fmt.Fprintf(&b, "%-40s %12.5g %12.5g\n", name, v, floor) }
	if r.Dim == 1 {
		row("Wasserstein-2 (exact in 1-D)", r.SW2, r.FloorSW2)
	} else {
		row(fmt.Sprintf("sliced Wasserstein-2 (%d projections)", proj), r.SW2, r.FloorSW2)
	}
	row(fmt.Sprintf("MMD² (RBF, σ = %.3g, %d vs %d pts)", r.Bandwidth, kx, ky), r.MMD2, r.FloorMMD2)
	row(fmt.Sprintf("energy distance (%d vs %d pts)", kx, ky), r.Energy, r.FloorEnergy)
	if r.W1 != nil {
		row("W1 to the exact mixture", *r.W1, *r.FloorW1)
		fmt.Fprintf(&b, "mode weights: %s (true %s)\n", fmtFloats(r.ModeWeights, "%.4f"), fmtFloats(r.TrueWeights, "%.4f"))
	}
	if r.PR != nil {
		b.WriteString(r.PR.Text())
	}
	b.WriteString("floor: the same measures for an independent draw of the data of the samples' size\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtFloats(v []float64, format string) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, " ")
}

// DefaultPRK is the number of nearest neighbours of the improved precision and recall (Kynkäänniemi et
// al. 2019 use 3).
const DefaultPRK = 3

// RollsReport is the improved precision and recall of samples against fresh data, next to the same
// for an independent draw of the data of the samples' size (the floor), overall and, for the
// multi Swiss roll, per roll. The JSON keys are stable.
type RollsReport struct {
	K              int         `json:"k"`
	Precision      float64     `json:"precision"`
	Recall         float64     `json:"recall"`
	FloorPrecision float64     `json:"floor_precision"`
	FloorRecall    float64     `json:"floor_recall"`
	Rolls          []RollGroup `json:"per_roll,omitempty"`
}

// RollGroup is one roll: precision over the samples attributed to it (nearest centre), recall over
// its data points. A roll without samples has precision 0 and Samples 0.
type RollGroup struct {
	Samples        int     `json:"samples"`
	Data           int     `json:"data_points"`
	Precision      float64 `json:"precision"`
	Recall         float64 `json:"recall"`
	FloorPrecision float64 `json:"floor_precision"`
	FloorRecall    float64 `json:"floor_recall"`
}

// precisionRecall measures gen and floorGen (an independent draw of src, of gen's size) against
// real (fresh points of src), all dim-dimensional.
func SamplePrecisionRecall(gen, floorGen, real []float32, dim, k int, src data.Source) (*RollsReport, error) {
	got, err := PrecisionRecall(real, gen, dim, k)
	if err != nil {
		return nil, err
	}
	floor, err := PrecisionRecall(real, floorGen, dim, k)
	if err != nil {
		return nil, err
	}
	rep := &RollsReport{K: k, Precision: got.Precision, Recall: got.Recall, FloorPrecision: floor.Precision, FloorRecall: floor.Recall}
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
		var g RollGroup
		var p, fp share
		var rc, frc share
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

// share counts the true verdicts among n.
type share struct{ in, n int }

func (f *share) add(v bool) {
	f.n++
	if v {
		f.in++
	}
}

func (f share) value() float64 {
	if f.n == 0 {
		return 0
	}
	return float64(f.in) / float64(f.n)
}

// Text renders the report as rows of samples, floor and their ratio.
func (r *RollsReport) Text() string {
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
