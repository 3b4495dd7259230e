package main

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"holdgo/data"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// TestCLINLLNumbers checks the numbers holdctl nll prints for point data, to the printed 4 decimals,
// against values computed here: the bound against sample.NLL of the same checkpoint, points, seed and
// settings, summarised by this test (mean and standard error per dimension, bits = nats/ln 2); the
// exact −log p against the paper's mixture written out from its literal numbers (docs/math.md#test-problems:
// 0.34 N(−0.6575, 0.01²) + 0.33 N(0.2474, 0.02²) + 0.33 N(0.8002, 0.01²)). A 2 % error in any printed
// figure is far beyond the 1e-4 tolerance (each is ≥ 0.05 in size here; checked below).
func TestCLINLLNumbers(t *testing.T) {
	hold1D, _, _ := trainedRuns(t)
	const n, seed = 24, 7
	pts := data.Draw(data.PaperMixture(), tensor.NewRNG(11), n)
	file := filepath.Join(t.TempDir(), "points.npy")
	if err := data.WriteNPY32(file, pts, n, 1); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, "nll", "--ckpt", hold1D, "--data", file, "--n", strconv.Itoa(n), "--batch", "8", "--tol", "1e-4",
		"--estimator", "exact", "--seed", strconv.Itoa(seed), "--threads", "1")
	num := `(-?[0-9.]+) ± ([0-9.]+)`
	parse := func(pattern string) [4]float64 {
		t.Helper()
		m := regexp.MustCompile(pattern + num + ` nats/dim, ` + num + ` bits/dim`).FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("nll output lacks %q:\n%s", pattern, r.stdout)
		}
		var v [4]float64
		for i := range v {
			v[i], _ = strconv.ParseFloat(m[i+1], 64)
		}
		return v
	}
	bound := parse(`NLL bound: `)
	aux := parse(`auxiliary values \(same expectation, lower variance\): `)
	exactOut := parse(`exact −log p of the same points \(the data's density\): `)

	m, err := train.LoadModel(hold1D, false, "")
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, n)
	for i, v := range pts {
		x[i] = float64(v)
	}
	res, err := sample.NLL(m.SDE, m.Score.(sample.DivScorer), x, 1,
		sample.LikelihoodConfig{Eps: 1e-5, RTol: 1e-4, ATol: 1e-4, Estimator: sample.EstimatorExact, MaxBatch: 8, Workers: 1}, seed)
	if err != nil {
		t.Fatal(err)
	}
	weights, means, stds := []float64{0.34, 0.33, 0.33}, []float64{-0.6575, 0.2474, 0.8002}, []float64{0.01, 0.02, 0.01}
	exact := make([]float64, n)
	for i, q := range x {
		var p float64
		for k := range weights {
			z := (q - means[k]) / stds[k]
			p += weights[k] * math.Exp(-0.5*z*z) / (stds[k] * math.Sqrt(2*math.Pi))
		}
		exact[i] = -math.Log(p)
	}
	meanSE := func(v []float64) (mean, se float64) { // per dimension (d = 1)
		for _, e := range v {
			mean += e / float64(len(v))
		}
		var ss float64
		for _, e := range v {
			ss += (e - mean) * (e - mean)
		}
		return mean, math.Sqrt(ss / float64(len(v)-1) / float64(len(v)))
	}
	for _, c := range []struct {
		what    string
		printed [4]float64
		values  []float64
	}{{"bound", bound, res.PerPoint}, {"bound with the drawn aux", aux, res.PerPointAux}, {"exact −log p", exactOut, exact}} {
		mean, se := meanSE(c.values)
		want := [4]float64{mean, se, mean / math.Ln2, se / math.Ln2}
		t.Logf("%s: printed %v, computed %.5f", c.what, c.printed, want)
		for i, w := range want {
			if !(math.Abs(c.printed[i]-w) <= 1e-4) {
				t.Errorf("%s: printed %v, computed %.5f", c.what, c.printed, want)
				break
			}
		}
		if !(math.Abs(mean) >= 0.05) || !(se >= 0.005) {
			t.Errorf("%s: mean %g or SE %g too small for the 1e-4 tolerance to be 2 %% of it", c.what, mean, se)
		}
	}
}
