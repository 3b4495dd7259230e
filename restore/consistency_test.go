package restore

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/internal/linref"
	"holdgo/rng"
	"holdgo/sample"
)

// TestHardConsistency is T4 (the spec's T3/T4): with σ_y = 0, ddnm and replace (and repaint) on HOLD-3
// with the 4×4 Gaussian prior's exact score end with max |A x − y| ≤ 1e-6 (the hard read-out).
func TestHardConsistency(t *testing.T) {
	const k = 8
	for _, tc := range []struct {
		m  Method
		op Operator
	}{
		{Method{Name: MethodDDNM, Eta: DefaultEta}, inpaint8(t)},
		{Method{Name: MethodDDNM, Eta: DefaultEta}, pool2(t)},
		{Method{Name: MethodReplace}, inpaint8(t)},
		{Method{Name: MethodRepaint, Resample: 2, Jump: 5}, inpaint8(t)},
	} {
		y, _, _, _, sde := setup16(t, tc.op, 0)
		mean, cov := prior16()
		prior, err := NewGaussianOracle(sde, mean, cov)
		if err != nil {
			t.Fatal(err)
		}
		grid, err := sample.NewSigmaGrid(sde, sample.GridVPMatched, sde.Horizon(), sample.DefaultSigmaMin, 30)
		if err != nil {
			t.Fatal(err)
		}
		u := PriorStates(sde, 16, k, 1, []int{0})
		r := &Restorer{SDE: sde, Score: prior, Method: tc.m, Grid: grid, Dim: 16}
		x, _, err := r.Run(u, []Problem{{Op: tc.op, Y: y}}, k, PhiloxNoise{Seed: 1, Images: []int{0}})
		if err != nil {
			t.Fatal(err)
		}
		a := dense(tc.op)
		var worst float64
		for s := range k {
			worst = math.Max(worst, maxAbsDiff(matVec(a, x[s*16:(s+1)*16]), y))
		}
		if !(worst <= 1e-6) {
			t.Errorf("%s on %T: max |Ax − y| = %.3g, want ≤ 1e-6", tc.m.Name, tc.op, worst)
		}
	}
}

// TestShiftKeepsW is T6 (the spec's T6, the T5): u ← u + m_t δc moves c by δc and changes w by
// < 1e-12, for HOLD-3, HOLD-4 and CLD from t = 10⁻³ to T; and a whole replacement run on HOLD-3 ends
// with the w it started with.
func TestShiftKeepsW(t *testing.T) {
	const batch, d = 4, 5
	for _, kind := range []string{hold.KindHOLD, hold.KindCLD} {
		cfg := hold.DefaultConfig(kind)
		orders := []int{cfg.Order}
		if kind == hold.KindHOLD {
			orders = []int{3, 4}
		}
		for _, order := range orders {
			cfg.Order = order
			sde, err := hold.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			n := sde.Blocks()
			r := rng.New(uint64(order))
			for _, tt := range []float64{1e-3, 0.1, 1, sde.Horizon()} {
				g, err := newGauge(sde, tt)
				if err != nil {
					t.Fatal(err)
				}
				u := make([]float64, batch*n*d)
				if err := sde.PriorSample(u, batch*d, r); err != nil {
					t.Fatal(err)
				}
				delta := make([]float64, batch*d)
				for i := range delta {
					delta[i] = r.Normal()
				}
				c0, w0 := make([]float64, batch*d), make([]float64, batch*(n-1)*d)
				c1, w1 := make([]float64, batch*d), make([]float64, batch*(n-1)*d)
				g.split(c0, w0, u, d, batch)
				g.shift(u, delta, d, batch)
				g.split(c1, w1, u, d, batch)
				for i := range c0 {
					c0[i] += delta[i]
				}
				if dc, dw := maxAbsDiff(c1, c0), maxAbsDiff(w1, w0); !(dw < 1e-12) || !(dc < 1e-12*(1+g.sigma)) {
					t.Errorf("%s-%d at t = %g: the shift along m moved w by %.3g and missed c by %.3g", kind, order, tt, dw, dc)
				}
			}
		}
	}
	// A replacement run keeps w from its start to its end.
	y, _, _, _, sde := setup16(t, inpaint8(t), 0.05)
	mean, cov := prior16()
	prior, err := NewGaussianOracle(sde, mean, cov)
	if err != nil {
		t.Fatal(err)
	}
	grid, err := sample.NewSigmaGrid(sde, sample.GridVPMatched, sde.Horizon(), sample.DefaultSigmaMin, 20)
	if err != nil {
		t.Fatal(err)
	}
	u := PriorStates(sde, 16, 2, 3, []int{4})
	g0, _ := newGauge(sde, grid[0])
	gN, _ := newGauge(sde, grid[len(grid)-1])
	c, w0, w1 := make([]float64, 32), make([]float64, 64), make([]float64, 64)
	g0.split(c, w0, u, 16, 2)
	r := &Restorer{SDE: sde, Score: prior, Method: Method{Name: MethodReplace}, Grid: grid, Dim: 16}
	if _, _, err := r.Run(u, []Problem{{Op: inpaint8(t), Y: y, SigmaY: 0.05}}, 2, PhiloxNoise{Seed: 3, Images: []int{4}}); err != nil {
		t.Fatal(err)
	}
	gN.split(c, w1, u, 16, 2)
	if dw := maxAbsDiff(w1, w0); !(dw < 1e-12) {
		t.Errorf("a replacement run moved w by %.3g, want < 1e-12", dw)
	}
}

// TestDenoiseStart is T5 (the T4): for A = I, y is the sufficient statistic at σ_y. The start
// time has NoiseLevel σ_y; x̂₀ of the prior at the start state is the MMSE estimate
// μ + C(C + σ_y²I)⁻¹(y − μ) (linref) to 1e-10 in one NFE; and the unconditioned sampler run from there
// (restore's driver, method none, 200 sde2 steps, n = 20,000) gives the posterior's moments.
func TestDenoiseStart(t *testing.T) {
	const sigmaY = 0.2
	op := NewIdentity(16)
	y, mu, sig, _, sde := setup16(t, op, sigmaY)
	mean, cov := prior16()
	prior, err := NewGaussianOracle(sde, mean, cov)
	if err != nil {
		t.Fatal(err)
	}
	tStar, err := sample.TimeAtNoiseLevel(sde, sigmaY, sde.MinTime(), sde.Horizon())
	if err != nil {
		t.Fatal(err)
	}
	if g := newRefGauge(sde, tStar); !(math.Abs(g.sigma/sigmaY-1) <= 1e-10) {
		t.Fatalf("the start time's noise level is %.15g, want σ_y = %g", g.sigma, sigmaY)
	}
	u, err := DenoiseStates(sde, tStar, [][]float64{y}, 16, 3, 2, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	x0 := make([]float64, 3*16)
	if err := sample.PredictX0(sde, prior, x0, u, []float64{tStar, tStar, tStar}); err != nil {
		t.Fatal(err)
	}
	cm := make([][]float64, 16)
	for i := range cm {
		cm[i] = append([]float64(nil), cov[i*16:(i+1)*16]...)
		cm[i][i] += sigmaY * sigmaY
	}
	sol := linref.Solve(cm, y) // μ = 0
	mmse := matVec(cm, sol)
	for i := range mmse {
		mmse[i] -= sigmaY * sigmaY * sol[i] // C(C + σ²I)⁻¹y = y − σ²(C + σ²I)⁻¹y
	}
	for s := range 3 {
		if e := maxAbsDiff(x0[s*16:(s+1)*16], mmse); !(e <= 1e-10) {
			t.Errorf("sample %d: x̂₀ at the denoise start differs from the MMSE estimate by %.3g", s, e)
		}
	}
	if e := maxAbsDiff(mmse, mu); !(e <= 1e-10) {
		t.Errorf("MMSE estimate and posterior mean differ by %.3g", e)
	}
	grid, err := sample.NewSigmaGrid(sde, sample.GridLambda, tStar, sample.DefaultSigmaMin, 200)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	images := make([]int, n/100)
	ys := make([][]float64, len(images))
	probs := make([]Problem, len(images))
	for i := range images {
		images[i], ys[i] = i, y
		probs[i] = Problem{Op: op, Y: y, SigmaY: sigmaY}
	}
	u, err = DenoiseStates(sde, tStar, ys, 16, 100, 2, images)
	if err != nil {
		t.Fatal(err)
	}
	r := &Restorer{SDE: sde, Score: prior, Method: Method{Name: MethodNone, Step: StepSDE2}, Grid: grid, Dim: 16}
	if _, _, err := r.Run(u, probs, 100, PhiloxNoise{Seed: 2, Images: images}); err != nil {
		t.Fatal(err)
	}
	g := newRefGauge(sde, grid[len(grid)-1])
	all := make([]int, 16)
	for i := range all {
		all[i] = i
	}
	if err := checkMoments(g.c(u, 16), 16, all, mu, sig, g.sigma*g.sigma); err != nil {
		t.Errorf("denoising from the exact start: %v", err)
	}
}
