package sample

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/rng"
)

// TestClippedScorerVJP: the VJP of the clipped score against central finite differences in float64 of
// uᵀS′(x) (S′ from ClippedScorer.Score, which reads x̂₀ from the oracle's own PredictX0, not from the VJP
// path) on a 2-D mixture with bound 0.5, for every SDE at times from T/100 to T, on samples whose x̂₀ are
// away from the kink; with a bound no x̂₀ reaches it is the inner VJP. The clipped pixels' −u_i·r_k term
// off by 0.1 % fails it.
func TestClippedScorerVJP(t *testing.T) {
	mix := hold.Mixture{Weights: []float64{0.5, 0.5}, Means: [][]float64{{-0.9, 0.3}, {0.8, -0.6}}, Stds: []float64{0.3, 0.2}}
	const batch, d, bound = 12, 2, 0.5
	var checked, clippedPixels int
	for name, sde := range xhatSDEs(t) {
		orc, err := hold.NewMixtureOracle(sde, mix)
		if err != nil {
			t.Fatal(err)
		}
		n := sde.Blocks()
		x := make([]float64, batch*n*d)
		if err := sde.PriorSample(x, batch, rng.New(8)); err != nil {
			t.Fatal(err)
		}
		times := make([]float64, batch)
		for i := range times { // down to T/100: below, HOLD-3/4's scores at prior-scale states are 10⁴–10⁸ and
			// the finite differences of S′ = rᵀm·clip(x̂₀) − rᵀu lose their digits to cancellation
			times[i] = sde.Horizon() * math.Pow(1e-2, float64(i)/float64(batch-1))
		}
		u := make([]float64, batch*d)
		r := rng.New(3)
		for i := range u {
			u[i] = r.Normal()
		}
		cs, err := NewClippedScorer(sde, orc, bound)
		if err != nil {
			t.Fatal(err)
		}
		score := make([]float64, batch*d)
		vjp := make([]float64, len(x))
		if err := cs.ScoreVJP(score, vjp, x, u, times); err != nil {
			t.Fatal(err)
		}
		want := make([]float64, batch*d)
		if err := cs.Score(want, x, times); err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if !(math.Abs(score[i]-want[i]) <= 1e-9*math.Max(1, math.Abs(want[i]))) {
				t.Errorf("%s: clipped score %d: %.12g from ScoreVJP, %.12g from Score", name, i, score[i], want[i])
			}
		}
		x0 := make([]float64, batch*d)
		if err := orc.PredictX0(x0, x, times); err != nil {
			t.Fatal(err)
		}
		for b := 0; b < batch; b++ {
			nearKink := false
			for i := 0; i < d; i++ {
				a := math.Abs(x0[b*d+i])
				nearKink = nearKink || math.Abs(a-bound) < 1e-3
				if a > bound {
					clippedPixels++
				}
			}
			if nearKink {
				continue
			}
			f := func(xs []float64) float64 {
				s := make([]float64, d)
				if err := cs.Score(s, xs, times[b:b+1]); err != nil {
					t.Fatal(err)
				}
				var v float64
				for i := range s {
					v += u[b*d+i] * s[i]
				}
				return v
			}
			row := append([]float64(nil), x[b*n*d:(b+1)*n*d]...)
			for j := range row {
				h := 1e-6 * math.Max(1, math.Abs(row[j]))
				keep := row[j]
				row[j] = keep + h
				fp := f(row)
				row[j] = keep - h
				fm := f(row)
				row[j] = keep
				fd := (fp - fm) / (2 * h)
				got := vjp[b*n*d+j]
				if !(math.Abs(got-fd) <= 1e-5*math.Max(1, math.Abs(fd))) {
					t.Errorf("%s t=%.3g: ∂(uᵀS′)/∂x_%d = %.10g, finite difference %.10g", name, times[b], j, got, fd)
				}
			}
			checked++
		}
		wide, _ := NewClippedScorer(sde, orc, 1e9)
		innerVJP := make([]float64, len(x))
		if err := orc.ScoreVJP(nil, innerVJP, x, u, times); err != nil {
			t.Fatal(err)
		}
		if err := wide.ScoreVJP(nil, vjp, x, u, times); err != nil {
			t.Fatal(err)
		}
		for i := range vjp {
			if !(math.Abs(vjp[i]-innerVJP[i]) <= 1e-12*math.Max(1, math.Abs(innerVJP[i]))) {
				t.Errorf("%s: unclipped VJP %d: %.12g, inner %.12g", name, i, vjp[i], innerVJP[i])
			}
		}
	}
	t.Logf("%d samples checked against finite differences; %d clipped pixels among all", checked, clippedPixels)
	if checked < 30 || clippedPixels < 20 {
		t.Errorf("the test exercised too little: %d samples checked, %d clipped pixels", checked, clippedPixels)
	}
	if err := (&ClippedScorer{SDE: newSDE(t, hold.KindVP), Inner: scoreOnly{}, Bound: 1}).ScoreVJP(nil, make([]float64, 1), make([]float64, 1), make([]float64, 1), []float64{0.5}); err == nil {
		t.Error("a score without a VJP accepted")
	}
}

// TestNLLClip: the likelihood of the clipped flow with a bound no x̂₀ reaches is the unclipped one (1e-9
// relative, both gauges); with bound 0.5 on data near ±0.9 it differs; a NaN or negative bound is refused.
func TestNLLClip(t *testing.T) {
	mix := hold.Mixture{Weights: []float64{0.5, 0.5}, Means: [][]float64{{-0.9, 0.3}, {0.8, -0.6}}, Stds: []float64{0.05, 0.05}}
	sde := newSDE(t, hold.KindCLD)
	orc, err := hold.NewMixtureOracle(sde, mix)
	if err != nil {
		t.Fatal(err)
	}
	data := []float64{-0.88, 0.31, 0.79, -0.62, -0.93, 0.27, 0.82, -0.58}
	for _, gauge := range []string{GaugeKernel, GaugeAligned} {
		cfg := LikelihoodConfig{MaxBatch: 4, Gauge: gauge}
		plain, err := NLL(sde, orc, data, 2, cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Clip = 1e9
		wide, err := NLL(sde, orc, data, 2, cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		for p := range plain.PerPoint {
			if !(math.Abs(wide.PerPoint[p]-plain.PerPoint[p]) <= 1e-9*math.Max(1, math.Abs(plain.PerPoint[p]))) {
				t.Errorf("%s gauge, point %d: %.12g nats clipped at 1e9, %.12g unclipped", gauge, p, wide.PerPoint[p], plain.PerPoint[p])
			}
		}
		cfg.Clip = 0.5
		tight, err := NLL(sde, orc, data, 2, cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s gauge: %.4f nats/dim unclipped, %.4f clipped at 0.5", gauge, plain.NatsPerDim.Mean, tight.NatsPerDim.Mean)
		if !(math.Abs(tight.NatsPerDim.Mean-plain.NatsPerDim.Mean) > 1e-3) {
			t.Errorf("%s gauge: clipping at 0.5 left the likelihood at %g", gauge, tight.NatsPerDim.Mean)
		}
	}
	for _, b := range []float64{math.NaN(), -1, math.Inf(1)} {
		if _, err := NLL(sde, orc, data, 2, LikelihoodConfig{Clip: b}, 3); err == nil {
			t.Errorf("clip bound %g accepted", b)
		}
	}
}
