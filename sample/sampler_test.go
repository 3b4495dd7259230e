package sample

import (
	"math"
	"slices"
	"testing"

	"holdgo/hold"
	"holdgo/rng"
)

func newSDE(t *testing.T, kind string) *hold.SDE {
	t.Helper()
	sde, err := hold.New(hold.DefaultConfig(kind))
	if err != nil {
		t.Fatal(err)
	}
	return sde
}

// gaussian returns the data law N(m, σ²) in one dimension.
func gaussian(m, sigma float64) hold.Mixture {
	return hold.Mixture{Weights: []float64{1}, Means: [][]float64{{m}}, Stds: []float64{sigma}}
}

func mustGrid(t *testing.T, kind string, start, end float64, steps int) []float64 {
	t.Helper()
	g, err := NewGrid(kind, start, end, steps)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestGrids(t *testing.T) {
	const start, end, n = 7.0, 1e-3, 8
	for _, kind := range []string{GridUniform, GridQuadratic, GridGeometric} { // the SDE-based kinds: TestSDEGrids
		g := mustGrid(t, kind, start, end, n)
		if len(g) != n+1 || g[0] != start || g[n] != end {
			t.Fatalf("%s: grid %v", kind, g)
		}
		for i := 1; i <= n; i++ {
			frac := float64(n-i) / n
			var want float64
			switch kind {
			case GridUniform:
				want = end + (start-end)*frac
			case GridQuadratic:
				want = end + (start-end)*frac*frac
			case GridGeometric:
				want = math.Pow(end, 1-frac) * math.Pow(start, frac)
			}
			if !(math.Abs(g[i]-want) <= 1e-13*start) {
				t.Errorf("%s: t_%d = %.17g, want %.17g", kind, i, g[i], want)
			}
		}
	}
	// The geometric grid has a constant ratio; the quadratic one is CLD-SGM's.
	g := mustGrid(t, GridGeometric, start, end, n)
	for i := 1; i <= n; i++ {
		if r := g[i-1] / g[i]; !(math.Abs(r-math.Pow(start/end, 1.0/n)) <= 1e-12) {
			t.Errorf("geometric ratio %d = %g", i, r)
		}
	}
	for _, bad := range []struct {
		kind       string
		start, end float64
		n          int
	}{{"linear", 1, 0.1, 4}, {GridUniform, 1, 0, 4}, {GridUniform, 0.1, 1, 4}, {GridUniform, 1, 0.1, 0}} {
		if _, err := NewGrid(bad.kind, bad.start, bad.end, bad.n); err == nil {
			t.Errorf("NewGrid(%q, %g, %g, %d) accepted", bad.kind, bad.start, bad.end, bad.n)
		}
	}
}

// q0Stats returns the mean and variance of the q block of samples with n blocks and d = 1.
func q0Stats(x []float64, n int) (mean, variance float64) {
	count := len(x) / n
	for i := 0; i < count; i++ {
		mean += x[i*n]
	}
	mean /= float64(count)
	for i := 0; i < count; i++ {
		variance += (x[i*n] - mean) * (x[i*n] - mean)
	}
	return mean, variance / float64(count-1)
}

// TestGaussianSamples is the acceptance check: for data N(m, σ²) and the exact score, 20,000 samples
// with ≥ 500 steps match the data's mean and variance within 3 standard errors.
func TestGaussianSamples(t *testing.T) {
	const samples, m, sigma = 20000, 0.4, 0.3
	seEps := []float64{sigma / math.Sqrt(samples), sigma * sigma * math.Sqrt(2.0/(samples-1))}
	cases := []struct {
		kind   string
		method Method
		denois bool
		grid   string
		// varFactor is the variance the scheme converges to, relative to σ²: 1, except for the PC
		// sampler, whose unadjusted Langevin corrector with step ε = 2(snr·‖z‖/‖S‖)² ≈ 2·snr²·v has the
		// fixed point v/(1 − snr²) on a Gaussian N(μ, v) (+2.6 % at snr 0.16, a property of the scheme).
		varFactor float64
	}{
		{hold.KindHOLD, LieTrotter{}, false, GridQuadratic, 1},
		{hold.KindHOLD, LieTrotter{BStep: BExpKernel}, false, GridQuadratic, 1},
		{hold.KindHOLD, EulerMaruyama{}, false, GridQuadratic, 1},
		{hold.KindHOLD, DormandPrince{}, false, GridQuadratic, 1},
		{hold.KindCLD, LieTrotter{ScoreAt: ScoreStart}, true, GridQuadratic, 1}, // CLD-SGM's SSCS with denoising
		// VE's σ(t) is exponential in t, so the uniform grid is its natural one (on the quadratic grid the
		// predictor alone is still 2 % off in variance at 500 steps).
		{hold.KindVE, PredictorCorrector{CorrectorSteps: -1}, true, GridUniform, 1},
		{hold.KindVE, PredictorCorrector{}, true, GridUniform, 1 / (1 - DefaultSNR*DefaultSNR)},
	}
	for _, c := range cases {
		sde := newSDE(t, c.kind)
		orc, err := hold.NewMixtureOracle(sde, gaussian(m, sigma))
		if err != nil {
			t.Fatal(err)
		}
		s := &Sampler{SDE: sde, Score: orc, Method: c.method, Grid: mustGrid(t, c.grid, sde.Horizon(), 1e-3, 500),
			Dim: 1, Denoise: c.denois, Workers: 2}
		res, err := s.Sample(samples, 11)
		if err != nil {
			t.Fatalf("%s %s: %v", c.kind, c.method.Name(), err)
		}
		mean, variance := q0Stats(res.X, sde.Blocks())
		wantVar := sigma * sigma * c.varFactor
		zMean, zVar := (mean-m)/seEps[0], (variance-wantVar)/(seEps[1]*c.varFactor)
		t.Logf("%s %-7s NFE %4d: mean %.5f (z %+.2f), variance %.5f (z %+.2f)", c.kind, c.method.Name(), res.NFE, mean, zMean, variance, zVar)
		if !(math.Abs(zMean) <= 3) || !(math.Abs(zVar) <= 3) {
			t.Errorf("%s %s: mean %.5f, variance %.5f: more than 3 standard errors from %g, %g", c.kind, c.method.Name(), mean, variance, m, wantVar)
		}
	}
}

// countingScorer counts batched score calls.
type countingScorer struct {
	hold.Scorer
	calls int
}

func (c *countingScorer) Score(dst, x, t []float64) error {
	c.calls++
	return c.Scorer.Score(dst, x, t)
}

func TestNFE(t *testing.T) {
	sde := newSDE(t, hold.KindHOLD)
	orc, _ := hold.NewMixtureOracle(sde, hold.PaperMixture())
	const steps = 13
	grid := mustGrid(t, GridQuadratic, sde.Horizon(), 1e-3, steps)
	for _, c := range []struct {
		method Method
		want   int
	}{
		{LieTrotter{}, steps}, {LieTrotter{BStep: BExpKernel}, steps}, {EulerMaruyama{}, steps},
		{Heun{}, 2 * steps}, {RK4{}, 4 * steps}, {PredictorCorrector{}, 2 * steps}, {PredictorCorrector{CorrectorSteps: 2}, 3 * steps},
		{DormandPrince{RTol: 1e-3, ATol: 1e-3}, -1},
	} {
		for _, denoise := range []bool{false, true} {
			counter := &countingScorer{Scorer: orc}
			s := &Sampler{SDE: sde, Score: counter, Method: c.method, Grid: grid, Dim: 1, Denoise: denoise, MaxBatch: 5}
			res, err := s.Sample(15, 3) // three chunks
			if err != nil {
				t.Fatal(err)
			}
			want := c.want
			if want < 0 { // adaptive: the calls of the largest chunk
				want = res.NFE
				if sum := res.ChunkNFE[0] + res.ChunkNFE[1] + res.ChunkNFE[2]; sum != counter.calls {
					t.Errorf("%s: chunk NFEs %v do not add up to %d calls", c.method.Name(), res.ChunkNFE, counter.calls)
				}
				if (res.NFE-2-btoi(denoise))%6 != 0 {
					t.Errorf("%s: NFE %d is not 2 + 6·steps", c.method.Name(), res.NFE)
				}
			} else {
				want += btoi(denoise)
				if counter.calls != 3*want {
					t.Errorf("%s denoise=%v: %d score calls for 3 chunks, want %d", c.method.Name(), denoise, counter.calls, 3*want)
				}
			}
			if res.NFE != want {
				t.Errorf("%s denoise=%v: NFE %d, want %d", c.method.Name(), denoise, res.NFE, want)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestDeterminism: results depend on (seed, MaxBatch) only, not on the number of workers.
func TestDeterminism(t *testing.T) {
	sde := newSDE(t, hold.KindHOLD)
	orc, _ := hold.NewMixtureOracle(sde, hold.PaperMixture())
	grid := mustGrid(t, GridQuadratic, sde.Horizon(), 1e-3, 20)
	run := func(workers, maxBatch int, seed uint64) []float64 {
		s := &Sampler{SDE: sde, Score: orc, Method: LieTrotter{}, Grid: grid, Dim: 1, Workers: workers, MaxBatch: maxBatch}
		res, err := s.Sample(50, seed)
		if err != nil {
			t.Fatal(err)
		}
		return res.X
	}
	a, b := run(1, 8, 5), run(3, 8, 5)
	if !slices.Equal(a, b) {
		t.Error("1 and 3 workers give different samples")
	}
	if slices.Equal(a, run(1, 8, 6)) {
		t.Error("seeds 5 and 6 give the same samples")
	}
	if !slices.Equal(run(2, 50, 5), run(1, 50, 5)) {
		t.Error("one chunk is not reproducible")
	}
}

func TestTrajectory(t *testing.T) {
	sde := newSDE(t, hold.KindHOLD)
	orc, _ := hold.NewMixtureOracle(sde, hold.PaperMixture())
	grid := mustGrid(t, GridUniform, 7, 1, 6) // 7, 6, …, 1
	for _, m := range []Method{EulerMaruyama{}, DormandPrince{}} {
		s := &Sampler{SDE: sde, Score: orc, Method: m, Grid: grid, Dim: 1, MaxBatch: 4, Record: []float64{7, 3.5, 1}}
		res, err := s.Sample(10, 2)
		if err != nil {
			t.Fatal(err)
		}
		tr := res.Trajectory
		wantTimes := []float64{7, 3, 1} // fixed steps snap to the grid time at or below 3.5
		if m.Name() == "ode" {
			wantTimes[1] = 3.5
		}
		if !slices.Equal(tr.Times, wantTimes) || len(tr.States) != 3 {
			t.Fatalf("%s: recorded times %v, want %v", m.Name(), tr.Times, wantTimes)
		}
		if !slices.Equal(tr.States[2], res.X) {
			t.Errorf("%s: the state recorded at the end differs from the result", m.Name())
		}
		prior := make([]float64, len(res.X))
		philoxPrior(sde, prior[:12], 4, ChunkSeed(2, 0))
		if !slices.Equal(tr.States[0][:12], prior[:12]) {
			t.Errorf("%s: the state recorded at T is not the first chunk's prior draw", m.Name())
		}
		if slices.Equal(tr.States[1], tr.States[0]) {
			t.Errorf("%s: the state at t = 3.5 equals the prior", m.Name())
		}
	}
}

// TestBSteps checks the B-step variants against hold's own B-steps and against the closed form of the
// linear ODE they solve.
func TestBSteps(t *testing.T) {
	for _, kind := range []string{hold.KindHOLD, hold.KindCLD, hold.KindVP} {
		sde := newSDE(t, kind)
		n := sde.Blocks()
		r := rng.New(4)
		x := make([]float64, 3*n)
		for i := range x {
			x[i] = r.Normal()
		}
		score := []float64{r.Normal(), r.Normal(), r.Normal()}
		tt, h := 0.5*sde.Horizon(), 0.01*sde.Horizon()
		want := slices.Clone(x)
		if err := sde.BStepExact(want, score, 3, tt, h); err != nil {
			t.Fatal(err)
		}
		got := slices.Clone(x)
		bExp(sde, got, score, 3, 1, tt, h, 0)
		for i := range got {
			if !(math.Abs(got[i]-want[i]) <= 1e-13*(1+math.Abs(want[i]))) {
				t.Errorf("%s: frozen exponential B-step %g, hold's BStepExact %g", kind, got[i], want[i])
			}
		}
		// With the kernel's slope: for a score S = −ℓ²s + R (R fixed), s(τ) solves ds/dτ = q(R + (Λ − ℓ²)s).
		ell2 := 3.7
		q, lambda := noiseRate(sde), splitPrecision(sde)
		dtau := sde.NativeStep(tt, h)
		got = slices.Clone(x)
		bExp(sde, got, score, 3, 1, tt, h, ell2)
		for b := 0; b < 3; b++ {
			s0 := x[b*n+n-1]
			rest := score[b] + ell2*s0
			rate := q * (lambda - ell2)
			exact := s0*math.Exp(rate*dtau) + q*rest*math.Expm1(rate*dtau)/rate
			if !(math.Abs(got[b*n+n-1]-exact) <= 1e-12*(1+math.Abs(exact))) {
				t.Errorf("%s: kernel exponential B-step %g, closed form %g", kind, got[b*n+n-1], exact)
			}
		}
	}
}

// explodingScore (d = 1) returns +1e200·x on the last block for the samples
// whose first coordinate is positive: a learned score that grows with the
// state, as a network can where it saw no data; 0 for the others.
type explodingScore struct{ n int }

func (e explodingScore) Score(dst, x, _ []float64) error {
	for i := range dst {
		dst[i] = 0
		if x[i*e.n] > 0 {
			dst[i] = 1e200 * x[i*e.n+e.n-1]
		}
	}
	return nil
}

// TestDivergedCount: samples driven off (NaN, Inf, beyond 1e6) are counted
// in Result.Diverged, the others are not.
func TestDivergedCount(t *testing.T) {
	sde := newSDE(t, hold.KindHOLD)
	n := sde.Blocks()
	s := &Sampler{SDE: sde, Score: explodingScore{n}, Method: EulerMaruyama{},
		Grid: mustGrid(t, GridQuadratic, sde.Horizon(), 1e-3, 20), Dim: 1}
	res, err := s.Sample(200, 3)
	if err != nil {
		t.Fatal(err)
	}
	if res.Diverged == 0 || res.Diverged == 200 {
		t.Fatalf("Diverged = %d of 200, want some but not all", res.Diverged)
	}
	bad := 0
	for i := range 200 {
		for _, v := range res.X[i*n : (i+1)*n] {
			if !(math.Abs(v) <= 1e6) { // NaN, ±Inf or beyond the bound
				bad++
				break
			}
		}
	}
	if bad != res.Diverged {
		t.Fatalf("Diverged = %d, but %d samples are non-finite or beyond 1e6", res.Diverged, bad)
	}
}
