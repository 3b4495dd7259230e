package train

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// TestNetworkScorerVJP checks uᵀ∂S/∂x of the network score against central
// finite differences of Score (float64 accumulation of the projections).
func TestNetworkScorerVJP(t *testing.T) {
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	net, err := layers.NewMLP(layers.MLPConfig{In: 7, Hidden: 16, Out: 2, Layers: 3}, tensor.NewRNG(4))
	if err != nil {
		t.Fatal(err)
	}
	s := &NetworkScorer{SDE: sde, Net: net}
	const batch = 3
	r := rng.New(5)
	x, u, ts := make([]float64, batch*6), make([]float64, batch*2), []float64{0.3, 1.5, 4}
	for i := range x {
		x[i] = r.Normal()
	}
	for i := range u {
		u[i] = r.Normal()
	}
	score, vjp := make([]float64, batch*2), make([]float64, batch*6)
	if err := s.ScoreVJP(score, vjp, x, u, ts); err != nil {
		t.Fatal(err)
	}
	direct := make([]float64, batch*2)
	if err := s.Score(direct, x, ts); err != nil {
		t.Fatal(err)
	}
	for i := range score {
		if math.Abs(score[i]-direct[i]) > 1e-6*math.Max(1, math.Abs(direct[i])) {
			t.Fatalf("score %d: %v from ScoreVJP, %v from Score", i, score[i], direct[i])
		}
	}
	project := func() float64 {
		out := make([]float64, batch*2)
		if err := s.Score(out, x, ts); err != nil {
			t.Fatal(err)
		}
		var p float64
		for i := range out {
			p += u[i] * out[i]
		}
		return p
	}
	for i := range x {
		orig := x[i]
		const h = 1e-2
		x[i] = orig + h
		fp := project()
		x[i] = orig - h
		fm := project()
		x[i] = orig
		fd := (fp - fm) / (2 * h)
		if math.Abs(fd-vjp[i]) > 1e-2*math.Abs(fd)+1e-3 {
			t.Errorf("vjp[%d] = %v, finite difference %v", i, vjp[i], fd)
		}
	}
}
