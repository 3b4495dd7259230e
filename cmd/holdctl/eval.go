package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/metrics"
	"holdgo/tensor"
	"holdgo/train"
)

// evalCommand compares generated points with the data distribution:
//
//	holdctl eval --data gmm1d samples.npy
//	holdctl eval --ckpt runs/hold --n 5000 --json --samples samples.npy
func evalCommand() *cli.Command {
	return &cli.Command{
		Name:      "eval",
		Usage:     "distances between samples (.npy) and the data: sliced Wasserstein, MMD, energy distance (1-D mixture: exact W1, mode weights)",
		ArgsUsage: "[SAMPLES.npy]",
		Description: "Draws --n fresh points of the data (--data, or the data of the run --ckpt) and reports, for the\n" +
			"samples and, as the floor to read them against, for a second independent draw of the data of the\n" +
			"same size: the sliced Wasserstein-2 distance, the squared MMD with an RBF kernel of median-heuristic\n" +
			"bandwidth and the energy distance (these two on at most --kernel-points points of each set), and the\n" +
			"improved precision and recall of Kynkäänniemi et al. 2019 (--pr-k nearest neighbours; for the multi\n" +
			"Swiss roll also per roll). For the paper's 1-D mixture (gmm1d) also the exact W1 to the mixture and\n" +
			"the share of samples per mode.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "samples", Usage: "samples (.npy, (n, d)); or give the file as the last argument"},
			&cli.StringFlag{Name: "data", Value: data.NameGMM1D, Usage: "data distribution: gmm1d, swissroll or a .npy file of points"},
			&cli.Float64Flag{Name: "swiss-noise", Value: data.DefaultSwissNoise, Usage: "noise of the Swiss rolls"},
			&cli.StringFlag{Name: "ckpt", Usage: "take the data distribution of this run (directory or checkpoint) instead of --data"},
			&cli.IntFlag{Name: "n", Value: 5000, Usage: "fresh data points to compare with"},
			&cli.IntFlag{Name: "kernel-points", Value: 2000, Usage: "points of each set used by MMD and the energy distance (O(n²))"},
			&cli.IntFlag{Name: "projections", Value: 256, Usage: "directions of the sliced Wasserstein distance"},
			&cli.IntFlag{Name: "pr-k", Value: prK, Usage: "nearest neighbours of the improved precision and recall (0: skip them; O(n²))"},
			&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the fresh data and the projections"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			trainDataFlag(),
		},
		Action: runEval,
	}
}

// evalReport is the result of eval; the JSON keys are stable.
type evalReport struct {
	Samples     string    `json:"samples"`
	Points      int       `json:"points"`
	Dim         int       `json:"dim"`
	Data        string    `json:"data"`
	DataPoints  int       `json:"data_points"`
	Seed        uint64    `json:"seed"`
	SW2         float64   `json:"sliced_w2"`
	MMD2        float64   `json:"mmd2"`
	Bandwidth   float64   `json:"mmd_bandwidth"`
	Energy      float64   `json:"energy"`
	FloorSW2    float64   `json:"floor_sliced_w2"`
	FloorMMD2   float64   `json:"floor_mmd2"`
	FloorEnergy float64   `json:"floor_energy"`
	W1          *float64  `json:"w1_mixture,omitempty"`
	FloorW1     *float64  `json:"floor_w1_mixture,omitempty"`
	ModeWeights []float64 `json:"mode_weights,omitempty"`
	TrueWeights []float64 `json:"true_mode_weights,omitempty"`
	PR          *prReport `json:"precision_recall,omitempty"`
}

// readPoints reads a .npy file of points (n, d) as float32, rejecting NaN and Inf.
func readPoints(path string) ([]float32, int, error) {
	a, err := data.ReadNPY(path)
	if err != nil {
		return nil, 0, err
	}
	if a.Rows() < 2 || a.Cols() < 1 {
		return nil, 0, fmt.Errorf("%s: shape %v: want at least 2 points of at least 1 value", path, a.Shape)
	}
	bad := 0
	for _, v := range a.Data {
		if math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
			bad++
		}
	}
	if bad > 0 {
		return nil, 0, fmt.Errorf("%s: %d of %d values are NaN or Inf (a diverged sampler?)", path, bad, len(a.Data))
	}
	return a.Float32(), a.Cols(), nil
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

func measure(x, y []float32, dim, kernelPoints, projections int, seed uint64) (distances, error) {
	var d distances
	var err error
	if d.sw2, err = metrics.SlicedWasserstein(x, y, dim, 2, projections, seed); err != nil {
		return d, err
	}
	xs, ys := strided(x, dim, kernelPoints), strided(y, dim, kernelPoints)
	if d.sigma, err = metrics.MedianBandwidth(xs, ys, dim); err != nil {
		return d, err
	}
	if d.mmd2, err = metrics.MMDWithBandwidth(xs, ys, dim, d.sigma); err != nil {
		return d, err
	}
	if d.energy, err = metrics.EnergyDistance(xs, ys, dim); err != nil {
		return d, err
	}
	return d, nil
}

func runEval(c *cli.Context) error {
	path := c.String("samples")
	switch {
	case c.NArg() > 1 || (c.NArg() == 1 && path != ""):
		return usageErr("eval takes one samples file (--samples FILE or a last argument; flags go before it), got %q",
			append([]string{path}, c.Args().Slice()...))
	case c.NArg() == 1:
		path = c.Args().First()
	case path == "":
		return usageErr("eval needs the samples: --samples FILE.npy")
	}
	if !strings.HasSuffix(path, ".npy") {
		return usageErr("eval: %s: want a .npy file of samples", path)
	}
	n, kp, proj := c.Int("n"), c.Int("kernel-points"), c.Int("projections")
	if n < 2 || kp < 2 || proj < 1 {
		return usageErr("eval: --n (%d) and --kernel-points (%d) must be ≥ 2, --projections (%d) ≥ 1", n, kp, proj)
	}
	if err := checkInts(c, intRange{name: "n", lo: 2, hi: 1 << 26}, intRange{name: "kernel-points", lo: 2, hi: 1 << 16},
		intRange{name: "projections", lo: 1, hi: 1 << 16}); err != nil {
		return err
	}
	if k := c.Int("pr-k"); k < 0 || k >= n {
		return usageErr("eval: --pr-k %d: want 0 (skip) or a neighbour count below --n (%d)", k, n)
	}
	var (
		src data.Source
		err error
	)
	if c.IsSet("ckpt") {
		if c.IsSet("data") {
			return usageErr("eval: give either --data or --ckpt, not both")
		}
		m, err := train.LoadModel(c.String("ckpt"), false, c.String("train-data"))
		if err != nil {
			return usageErr("eval: %v", err)
		}
		src = m.Source
	} else if src, err = data.Open(c.String("data"), c.Float64("swiss-noise")); err != nil {
		return usageErr("eval: %v", err)
	}
	x, dim, err := readPoints(path)
	if err != nil {
		return usageErr("eval: %v", err)
	}
	if dim != src.Dimension() {
		return usageErr("eval: %s holds %d-D points, the data %s is %d-D", path, dim, src.Name(), src.Dimension())
	}
	seed := c.Uint64("seed")
	r := tensor.NewRNG(seed)
	fresh, fresh2 := data.Draw(src, r, n), data.Draw(src, r, len(x)/dim)
	rep := evalReport{Samples: path, Points: len(x) / dim, Dim: dim, Data: src.Name(), DataPoints: n, Seed: seed}
	got, err := measure(x, fresh, dim, kp, proj, seed)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	floor, err := measure(fresh2, fresh, dim, kp, proj, seed)
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	rep.SW2, rep.MMD2, rep.Bandwidth, rep.Energy = got.sw2, got.mmd2, got.sigma, got.energy
	rep.FloorSW2, rep.FloorMMD2, rep.FloorEnergy = floor.sw2, floor.mmd2, floor.energy
	if mix, ok := src.(data.Mixture); ok && mix.Dim == 1 {
		w1, err := metrics.W1Mixture(x, mix)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		fw1, err := metrics.W1Mixture(fresh2, mix)
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		rep.W1, rep.FloorW1 = &w1, &fw1
		if rep.ModeWeights, err = metrics.ModeWeights(x, mix); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		var sum float64
		for _, w := range mix.Weights {
			sum += w
		}
		for _, w := range mix.Weights {
			rep.TrueWeights = append(rep.TrueWeights, w/sum)
		}
	}
	if k := c.Int("pr-k"); k > 0 {
		if k >= rep.Points {
			return usageErr("eval: --pr-k %d needs more than %d samples, the file has %d", k, k, rep.Points)
		}
		if rep.PR, err = precisionRecall(x, fresh2, fresh, dim, k, src); err != nil {
			return fmt.Errorf("eval: %w", err)
		}
	}
	if c.Bool("json") {
		enc := json.NewEncoder(c.App.Writer)
		return enc.Encode(rep)
	}
	return rep.writeText(c.App.Writer, proj, min(kp, rep.Points), min(kp, n))
}

func (r evalReport) writeText(w io.Writer, proj, kx, ky int) error {
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
		b.WriteString(r.PR.text())
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
