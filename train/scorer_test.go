package train

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/tensor"
)

// TestNetworkScorerVJP checks uᵀ∂S/∂x of the network score against central
// finite differences of Score (float64 accumulation of the projections), for
// the native parameterisation and EDM's preconditioning (whose VJP pulls the
// network's input gradient back through the input map), on HOLD-3 and VP.
func TestNetworkScorerVJP(t *testing.T) {
	for _, kind := range []string{hold.KindHOLD, hold.KindVP} {
		for _, edm := range []bool{false, true} {
			checkScorerVJP(t, kind, edm)
		}
	}
}

func checkScorerVJP(t *testing.T, kind string, edm bool) {
	sde, err := hold.New(hold.DefaultConfig(kind))
	if err != nil {
		t.Fatal(err)
	}
	n := sde.Blocks()
	net, err := layers.NewMLP(layers.MLPConfig{In: 2*n + 1, Hidden: 16, Out: 2, Layers: 3}, tensor.NewRNG(4))
	if err != nil {
		t.Fatal(err)
	}
	s := &NetworkScorer{SDE: sde, Net: net, EDM: edm}
	const batch = 3
	r := rng.New(5)
	x, u := make([]float64, batch*2*n), make([]float64, batch*2)
	ts := []float64{0.3, 1.5, 4}
	if kind == hold.KindVP {
		ts = []float64{0.1, 0.4, 0.9}
	}
	for i := range x {
		x[i] = r.Normal()
	}
	for i := range u {
		u[i] = r.Normal()
	}
	score, vjp := make([]float64, batch*2), make([]float64, batch*2*n)
	if err := s.ScoreVJP(score, vjp, x, u, ts); err != nil {
		t.Fatal(err)
	}
	direct := make([]float64, batch*2)
	if err := s.Score(direct, x, ts); err != nil {
		t.Fatal(err)
	}
	for i := range score {
		if !(math.Abs(score[i]-direct[i]) <= 1e-6*math.Max(1, math.Abs(direct[i]))) {
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
		if !(math.Abs(fd-vjp[i]) <= 1e-2*math.Abs(fd)+1e-3) {
			t.Errorf("%s (EDM %v): vjp[%d] = %v, finite difference %v", kind, edm, i, vjp[i], fd)
		}
	}
}

// TestNetworkScorerForkSamples: sampling with forks of the scorer on
// several workers gives the bits of one worker (results depend only on the
// seed and the chunk size), for the demo's network (log t, the x̂₀ estimate,
// Fourier features). Under -race it also shows that forks share nothing
// they write.
func TestNetworkScorerForkSamples(t *testing.T) {
	cfg := DefaultRunConfig()
	cfg.Hidden, cfg.Layers, cfg.LogTime, cfg.Fourier, cfg.Estimate = 32, 3, true, 8, true
	built, err := cfg.Build()
	if err != nil {
		t.Fatal(err)
	}
	method, _, err := sample.NewMethod("lt", sample.Options{})
	if err != nil {
		t.Fatal(err)
	}
	grid, err := sample.NewSDEGrid(built.SDE, sample.GridQuadratic, built.SDE.Horizon(), 1e-3, 12)
	if err != nil {
		t.Fatal(err)
	}
	draw := func(workers int) []float64 {
		s := &sample.Sampler{SDE: built.SDE, Score: &NetworkScorer{SDE: built.SDE, Net: built.Net}, Method: method, Grid: grid,
			Dim: built.Source.Dimension(), Denoise: true, MaxBatch: 23, Workers: workers}
		res, err := s.Sample(100, 5)
		if err != nil {
			t.Fatal(err)
		}
		return res.X
	}
	one, three := draw(1), draw(3)
	for i := range one {
		if math.Float64bits(one[i]) != math.Float64bits(three[i]) {
			t.Fatalf("value %d: %v with 3 workers, %v with 1", i, three[i], one[i])
		}
	}
}

// TestNetworkScorerForwardBatch: Score splits a batch into forward passes of at most ForwardBatch
// samples, and every sample's score is the one a single pass over the whole batch gives, up to float32
// rounding (an NCSN++ with random weights: convolutions, group norms and attention, all per sample; a
// pass of one sample takes other GEMM kernels, measured 6e-8 relative), so a wrong offset or a stale
// buffer fails it.
func TestNetworkScorerForwardBatch(t *testing.T) {
	const batch, d = 7, 64
	sde, net, x, ts := tinyScorerFixture(t, batch, 0.8)
	whole, split := make([]float64, batch*d), make([]float64, batch*d)
	if err := (&NetworkScorer{SDE: sde, Net: net, ForwardBatch: batch}).Score(whole, x, ts); err != nil {
		t.Fatal(err)
	}
	if err := (&NetworkScorer{SDE: sde, Net: net, ForwardBatch: 3}).Score(split, x, ts); err != nil {
		t.Fatal(err)
	}
	for i := range whole {
		if !(math.Abs(whole[i]-split[i]) <= 1e-6*math.Max(1e-3, math.Abs(whole[i]))) {
			t.Fatalf("score %d: %v in one pass of 7, %v in passes of 3", i, whole[i], split[i])
		}
	}
}

// TestNetworkScorerMemoryBudget: with a memory budget the first call measures a pass of ProbeBatch
// samples and sizes the other passes from it (budget / bytes per sample, from 1 to MaxForwardBatch),
// and every sample's score is the one a single pass gives up to float32 rounding.
func TestNetworkScorerMemoryBudget(t *testing.T) {
	const batch, d = 23, 64
	sde, net, x, ts := tinyScorerFixture(t, batch, 0.25)
	n := sde.Blocks()
	// The bytes per sample, measured here on a tape of our own.
	g := autograd.NewTape(tensor.CPU)
	g.SetNoGrad(true)
	probe := tensor.FromSlice(toF32(x[:ProbeBatch*n*d]), ProbeBatch, n*d)
	net.ScoreForward(g, g.Const(probe), g.Const(tensor.FromSlice(toF32(ts[:ProbeBatch]), ProbeBatch)))
	perSample := g.MemBytes() / ProbeBatch
	whole := make([]float64, batch*d)
	if err := (&NetworkScorer{SDE: sde, Net: net, ForwardBatch: batch}).Score(whole, x, ts); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		budget int64
		want   int
	}{{5 * perSample, 5}, {5*perSample + perSample/2, 5}, {1, 1}, {1 << 50, MaxForwardBatch}} {
		s := &NetworkScorer{SDE: sde, Net: net, MemoryBudget: c.budget}
		got := make([]float64, batch*d)
		if err := s.Score(got, x, ts); err != nil {
			t.Fatal(err)
		}
		if s.ForwardBatchChosen() != c.want {
			t.Errorf("budget %d bytes (%d per sample): forward batch %d, want %d", c.budget, perSample, s.ForwardBatchChosen(), c.want)
		}
		for i := range whole {
			if !(math.Abs(whole[i]-got[i]) <= 1e-6*math.Max(1e-3, math.Abs(whole[i]))) {
				t.Fatalf("budget %d: score %d: %v in one pass, %v", c.budget, i, whole[i], got[i])
			}
		}
	}
}

// tinyScorerFixture is an ncsnpp-tiny on 8×8 single-channel images under HOLD-3 with random weights
// (N(0, 0.05²)), batch N(0, 1) states and the times 0.1 + dt·i.
func tinyScorerFixture(t *testing.T, batch int, dt float64) (*hold.SDE, *layers.NCSNpp, []float64, []float64) {
	t.Helper()
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	n := sde.Blocks()
	cfg, err := layers.NCSNppPreset("ncsnpp-tiny", n, 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	net, err := layers.NewNCSNpp(cfg, rng.New(4))
	if err != nil {
		t.Fatal(err)
	}
	rng.New(8).FillNormal(net.Params.Data, 0, 0.05)
	r := rng.New(9)
	x, ts := make([]float64, batch*n*64), make([]float64, batch)
	for i := range x {
		x[i] = r.Normal()
	}
	for i := range ts {
		ts[i] = 0.1 + dt*float64(i)
	}
	return sde, net, x, ts
}

func toF32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// TestPadBatchBitIdentical: with PadBatch every pass holds ForwardBatch samples, so a sample's score
// and VJP are bit-identical whether it is scored alone, in a short call, at another offset or in a
// call of several passes (holdctl restore's promise). Without padding a pass of one sample takes
// other kernels (TestNetworkScorerForwardBatch: 6e-8 relative), which this test would see.
func TestPadBatchBitIdentical(t *testing.T) {
	const batch, d, pass = 19, 64, 8
	sde, net, x, ts := tinyScorerFixture(t, batch, 0.05)
	width := sde.Blocks() * d
	u := make([]float64, batch*d)
	r := rng.New(12)
	for i := range u {
		u[i] = r.Normal()
	}
	score := func(lo, hi int) ([]float64, []float64, []float64) {
		s := &NetworkScorer{SDE: sde, Net: net, ForwardBatch: pass, PadBatch: true}
		sc, vs, vjp := make([]float64, (hi-lo)*d), make([]float64, (hi-lo)*d), make([]float64, (hi-lo)*width)
		if err := s.Score(sc, x[lo*width:hi*width], ts[lo:hi]); err != nil {
			t.Fatal(err)
		}
		if err := s.ScoreVJP(vs, vjp, x[lo*width:hi*width], u[lo*d:hi*d], ts[lo:hi]); err != nil {
			t.Fatal(err)
		}
		return sc, vs, vjp
	}
	ws, wv, wj := score(0, batch)
	for _, c := range [][2]int{{0, 1}, {4, 5}, {3, 9}, {11, 19}, {1, 18}} {
		sc, vs, vjp := score(c[0], c[1])
		for i := range sc {
			j := c[0]*d + i
			if math.Float64bits(sc[i]) != math.Float64bits(ws[j]) || math.Float64bits(vs[i]) != math.Float64bits(wv[j]) {
				t.Fatalf("samples %d…%d: score %d is %v (%v from ScoreVJP), %v in the call of %d", c[0], c[1]-1, i, sc[i], vs[i], ws[j], batch)
			}
		}
		for i := range vjp {
			if math.Float64bits(vjp[i]) != math.Float64bits(wj[c[0]*width+i]) {
				t.Fatalf("samples %d…%d: VJP %d is %v, %v in the call of %d", c[0], c[1]-1, i, vjp[i], wj[c[0]*width+i], batch)
			}
		}
	}
}
