package train

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// TestScoreLossLearnsGaussianScore trains the toy score network on 1-D
// Gaussian data with HOLD's BCSM loss and compares the learned last-block
// score with the exact one (mixture oracle) on states drawn from p_t.
func TestScoreLossLearnsGaussianScore(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a network for a few seconds")
	}
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	mix := hold.Mixture{Weights: []float64{1}, Means: [][]float64{{0.3}}, Stds: []float64{0.2}}
	data := func(r *rng.RNG, dst []float32) { r.FillNormal(dst, 0.3, 0.2) }
	net, err := layers.NewMLP(layers.MLPConfig{In: 4, Hidden: 64, Out: 1, Layers: 4}, tensor.NewRNG(1))
	if err != nil {
		t.Fatal(err)
	}
	loss, err := ScoreLoss(sde, net, data, 256, 1, TimeSampling{Scheme: TimesUniform})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{Steps: 1500, Batch: 256, LR: 2e-3, GradClip: 1, EMA: 0.99, Seed: 3}, net.Params, loss)
	if err != nil {
		t.Fatal(err)
	}
	var first, last float64
	for i := range 1500 {
		s, err := tr.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		if i < 50 {
			first += s.Loss / 50
		}
		if i >= 1450 {
			last += s.Loss / 50
		}
	}
	if !(last < 0.8*first) {
		t.Fatalf("loss %.3f → %.3f: not learning", first, last)
	}
	// Compare scores on states from the forward process at t = 1.
	oracle, err := hold.NewMixtureOracle(sde, mix)
	if err != nil {
		t.Fatal(err)
	}
	const m = 512
	b := hold.Batch{Data: make([]float32, m), Times: make([]float64, m), Noise: make([]float32, 3*m),
		State: make([]float32, 3*m), Target: make([]float32, m)}
	r := rng.New(9)
	r.FillNormal(b.Data, 0.3, 0.2)
	r.FillNormal(b.Noise, 0, 1)
	for i := range b.Times {
		b.Times[i] = 1
	}
	if err := sde.Perturb(b); err != nil {
		t.Fatal(err)
	}
	x := make([]float64, 3*m)
	for i, v := range b.State {
		x[i] = float64(v)
	}
	want, got := make([]float64, m), make([]float64, m)
	if err := oracle.Score(want, x, b.Times); err != nil {
		t.Fatal(err)
	}
	if err := (&NetworkScorer{SDE: sde, Net: net}).Score(got, x, b.Times); err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for i := range want {
		num += (got[i] - want[i]) * (got[i] - want[i])
		den += want[i] * want[i]
	}
	if rel := math.Sqrt(num / den); !(rel <= 0.15) {
		t.Fatalf("learned score off by %.3f (relative RMS) from the exact score at t = 1", rel)
	}
}
