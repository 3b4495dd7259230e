package sample

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/rng"
)

// xhatSDEs are every linear SDE of the engine: HOLD-2/3/4, CLD, VP, VE.
func xhatSDEs(t *testing.T) map[string]*hold.SDE {
	t.Helper()
	out := map[string]*hold.SDE{}
	for _, order := range []int{2, 3, 4} {
		cfg := hold.DefaultConfig(hold.KindHOLD)
		cfg.Order = order
		sde, err := hold.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out[map[int]string{2: "hold2", 3: "hold3", 4: "hold4"}[order]] = sde
	}
	for _, kind := range []string{hold.KindCLD, hold.KindVP, hold.KindVE} {
		out[kind] = newSDE(t, kind)
	}
	return out
}

// TestXDDIMPointMass: for a single Dirac at q0 the order-0 x̂₀ step is exact. From prior draws, 1 and
// 10 steps of xddim land on the exact probability-flow solution (an independent adaptive RK45 solve of
// the same ODE at rtol = atol = 1e-10) within 1e-6, and the read-out returns q0 within 1e-6.
func TestXDDIMPointMass(t *testing.T) {
	const q0, batch = 0.37, 6
	for name, sde := range xhatSDEs(t) {
		orc, err := hold.NewMixtureOracle(sde, gaussian(q0, 0))
		if err != nil {
			t.Fatal(err)
		}
		n := sde.Blocks()
		start := make([]float64, batch*n)
		if err := sde.PriorSample(start, batch, rng.New(5)); err != nil {
			t.Fatal(err)
		}
		ends := []float64{sde.Horizon(), 1e-3}
		ref := append([]float64(nil), start...)
		dp := &Sampler{SDE: sde, Score: orc, Method: DormandPrince{RTol: 1e-10, ATol: 1e-10}, Grid: ends, Dim: 1}
		if _, _, err := dp.Run(ref, batch, rng.New(1)); err != nil {
			t.Fatal(err)
		}
		for _, steps := range []int{1, 10} {
			grid, err := NewGrid(GridQuadratic, sde.Horizon(), 1e-3, steps)
			if err != nil {
				t.Fatal(err)
			}
			x := append([]float64(nil), start...)
			s := &Sampler{SDE: sde, Score: orc, Method: XHat{}, Grid: grid, Dim: 1}
			nfe, _, err := s.Run(x, batch, rng.New(1))
			if err != nil {
				t.Fatal(err)
			}
			if nfe != steps {
				t.Errorf("%s %d steps: NFE %d", name, steps, nfe)
			}
			for i := range x {
				if e := math.Abs(x[i] - ref[i]); !(e <= 1e-6*math.Max(1, math.Abs(ref[i]))) {
					t.Errorf("%s %d steps: state %d = %.12g, RK45 reference %.12g", name, steps, i, x[i], ref[i])
				}
			}
			x = append(x[:0], start...)
			s.Denoise = true
			if _, _, err := s.Run(x, batch, rng.New(1)); err != nil {
				t.Fatal(err)
			}
			for b := 0; b < batch; b++ {
				if e := math.Abs(x[b*n] - q0); !(e <= 1e-6) {
					t.Errorf("%s %d steps with read-out: q = %.12g, want %g", name, steps, x[b*n], q0)
				}
			}
		}
	}
}

// vpAlphaSigma is VP's kernel written out independently: log α_t = −¼t²(β₁−β₀) − ½tβ₀, σ_t² = 1 − α_t².
func vpAlphaSigma(t float64) (float64, float64) {
	const b0, b1 = 0.1, 20.0
	la := -0.25*t*t*(b1-b0) - 0.5*t*b0
	return math.Exp(la), math.Sqrt(-math.Expm1(2 * la))
}

// TestXDDIMIsDDIMForVP: one xddim step of VP equals DDIM's x′ = α′x̂₀ + σ′(x − αx̂₀)/σ to 1e-12, with
// x̂₀ from the mixture oracle, on several steps of a grid.
func TestXDDIMIsDDIMForVP(t *testing.T) {
	sde := newSDE(t, hold.KindVP)
	orc, _ := hold.NewMixtureOracle(sde, hold.PaperMixture())
	grid, _ := NewGrid(GridQuadratic, 1, 1e-4, 12)
	const batch = 8
	r := rng.New(2)
	for i := 0; i+1 < len(grid); i++ {
		x := make([]float64, batch)
		for b := range x {
			x[b] = 1.5 * r.Normal()
		}
		x0 := make([]float64, batch)
		times := make([]float64, batch)
		for b := range times {
			times[b] = grid[i]
		}
		if err := orc.PredictX0(x0, x, times); err != nil {
			t.Fatal(err)
		}
		a, s := vpAlphaSigma(grid[i])
		ap, sp := vpAlphaSigma(grid[i+1])
		want := make([]float64, batch)
		for b := range want {
			want[b] = ap*x0[b] + sp*(x[b]-a*x0[b])/s
		}
		smp := &Sampler{SDE: sde, Score: orc, Method: XHat{}, Grid: grid[i : i+2], Dim: 1}
		if _, _, err := smp.Run(x, batch, rng.New(1)); err != nil {
			t.Fatal(err)
		}
		for b := range x {
			if e := math.Abs(x[b] - want[b]); !(e <= 1e-12) {
				t.Errorf("step %d (t %g → %g): xddim %.17g, DDIM %.17g (diff %.2g)", i, grid[i], grid[i+1], x[b], want[b], e)
			}
		}
	}
}

// TestMultistepCoefficients: the Gauss–Legendre coefficients of the multistep samplers integrate the
// Lagrange basis, which sums to one, so Σ_j c_j must equal the closed form m_{t′} − Φm_t of the
// order-0 step to 1e-6 relative (the quadrature of the stiff last step to t = 1e-3 is the limit:
// HOLD-4 reaches 2e-7 there; 1e-10 elsewhere), for every SDE, order and extrapolation variable.
func TestMultistepCoefficients(t *testing.T) {
	for name, sde := range xhatSDEs(t) {
		end := 1e-3
		grid, _ := NewGrid(GridQuadratic, sde.Horizon(), end, 15)
		for _, m := range []XHat{{Points: 2}, {Points: 3}, {Points: 3, Var: VarLogT}} {
			tab, err := m.tables(sde, grid)
			if err != nil {
				t.Fatal(err)
			}
			ord, _ := XHat{}.tables(sde, grid)
			n := sde.Blocks()
			for i, st := range tab.steps {
				var sum vecN
				for _, c := range st.coef {
					for k := 0; k < n; k++ {
						sum[k] += c[k]
					}
				}
				for k := 0; k < n; k++ {
					want := ord.steps[i].coef[0][k]
					if e := math.Abs(sum[k] - want); !(e <= 1e-6*math.Max(math.Abs(want), 1e-3)) {
						t.Errorf("%s %s step %d block %d: Σc = %.12g, m′ − Φm = %.12g", name, m.Name()+m.Var, i, k, sum[k], want)
					}
				}
			}
		}
	}
}

// TestXAncPosterior: at η = 1 the VP step is DDPM's posterior q(x_{t′} | x_t, x̂₀) written out
// independently; for HOLD-3, CLD and VP at η = 0.5 the step keeps the marginal covariance
// (KΣ_tKᵀ + noise·noiseᵀ = Σ_{t′}) and η = 0 gives xddim's Φ.
func TestXAncPosterior(t *testing.T) {
	vp := newSDE(t, hold.KindVP)
	grid, _ := NewGrid(GridQuadratic, 1, 1e-3, 10)
	tab, err := XHat{Stochastic: true, Eta: 1}.tables(vp, grid)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range tab.steps {
		a, s := vpAlphaSigma(grid[i])
		ap, sp := vpAlphaSigma(grid[i+1])
		ratio := a / ap
		cond := s*s - ratio*ratio*sp*sp // variance of x_t given x_{t′}
		wantK := ratio * sp * sp / (s * s)
		wantC := ap * cond / (s * s)
		wantVar := sp * sp * cond / (s * s)
		got := [3]float64{st.lin[0][0], st.coef[0][0], st.noise[0][0] * st.noise[0][0]}
		for j, want := range [3]float64{wantK, wantC, wantVar} {
			if e := math.Abs(got[j] - want); !(e <= 1e-10*math.Max(1e-6, math.Abs(want))) {
				t.Errorf("VP step %d quantity %d: %.14g, DDPM posterior %.14g", i, j, got[j], want)
			}
		}
	}
	for name, sde := range xhatSDEs(t) {
		n := sde.Blocks()
		g, _ := NewGrid(GridQuadratic, sde.Horizon(), 1e-2, 8)
		half, err := XHat{Stochastic: true, Eta: 0.5}.tables(sde, g)
		if err != nil {
			t.Fatal(err)
		}
		for i, st := range half.steps {
			k0, k1 := sde.Kernel(g[i]), sde.Kernel(g[i+1])
			sig := fromHold(&k0.Sigma, n)
			ks := mul(&st.lin, &sig, n)
			kt := transpose(&st.lin, n)
			ks = mul(&ks, &kt, n)
			nt := transpose(&st.noise, n)
			nn := mul(&st.noise, &nt, n)
			for a := 0; a < n; a++ {
				for b := 0; b < n; b++ {
					want := k1.Sigma.At(a, b)
					scale := math.Sqrt(k1.Sigma.At(a, a) * k1.Sigma.At(b, b))
					if e := math.Abs(ks[a][b] + nn[a][b] - want); !(e <= 1e-7*scale) {
						t.Errorf("%s η=0.5 step %d: marginal covariance [%d][%d] = %.10g, Σ′ = %.10g", name, i, a, b, ks[a][b]+nn[a][b], want)
					}
				}
			}
		}
	}
}

// TestRegistryNames: every registry name builds a method whose Name is that name.
func TestRegistryNames(t *testing.T) {
	for _, info := range Registry {
		m, perStep, err := NewMethod(info.Name, Options{})
		if err != nil || m.Name() != info.Name || perStep != info.PerStep {
			t.Errorf("%s: method %v (%v), %d per step", info.Name, m, err, perStep)
		}
	}
	if _, _, err := NewMethod("xanc", Options{Eta: 2, EtaSet: true}); err == nil {
		t.Error("eta 2 accepted")
	}
	if _, err := StepsFor("xdpm2", 1, true); err == nil {
		t.Error("NFE 1 with a read-out accepted")
	}
}

// TestSDEGrids: the log-SNR grid is uniform in λ(t) = log(m_q²/Σ_qq), EDM's in σ^{1/ρ} of the sufficient
// statistic's noise level, and vpmatched follows VP's schedule in σ, both ending at σ_min, for HOLD and VP.
func TestSDEGrids(t *testing.T) {
	for _, kind := range []string{hold.KindHOLD, hold.KindVP} {
		sde := newSDE(t, kind)
		g, err := NewSDEGrid(sde, GridLogSNR, sde.Horizon(), 1e-3, 7)
		if err != nil {
			t.Fatal(err)
		}
		lam := func(t float64) float64 {
			k := sde.Kernel(t)
			return 2*math.Log(math.Abs(k.Mean.At(0, 0))) - math.Log(k.Sigma.At(0, 0))
		}
		step := (lam(g[7]) - lam(g[0])) / 7
		for i := 1; i < len(g); i++ {
			if d := lam(g[i]) - lam(g[i-1]); !(math.Abs(d-step) <= 1e-9*math.Abs(step)) {
				t.Errorf("%s logsnr step %d: Δλ %g, want %g", kind, i, d, step)
			}
		}
		// The σ-grids, in σ_t = (mᵀΣ⁻¹m)^(−1/2) from an independent inverse of Σ.
		sig := func(tt float64) float64 {
			n := sde.Blocks()
			k := sde.Kernel(tt)
			sm := fromHold(&k.Sigma, n)
			inv, err := inverse(&sm, n)
			if err != nil {
				t.Fatal(err)
			}
			var snr float64
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					snr += k.Mean.At(i, 0) * inv[i][j] * k.Mean.At(j, 0)
				}
			}
			return 1 / math.Sqrt(snr)
		}
		e, err := NewSDEGrid(sde, GridEDM, sde.Horizon(), 1e-3, 7)
		if err != nil {
			t.Fatal(err)
		}
		if got := sig(e[7]); !(math.Abs(got-DefaultSigmaMin) <= 1e-6*DefaultSigmaMin) {
			t.Errorf("%s edm grid ends at σ = %g, want %g", kind, got, DefaultSigmaMin)
		}
		root := func(t float64) float64 { return math.Pow(sig(t), 1/EDMRho) }
		step = (root(e[7]) - root(e[0])) / 7
		for i := 1; i < len(e); i++ {
			if d := root(e[i]) - root(e[i-1]); !(math.Abs(d-step) <= 1e-6*math.Abs(step)) {
				t.Errorf("%s edm step %d: Δσ^(1/ρ) %g, want %g", kind, i, d, step)
			}
		}
		// vpmatched: VP's own noise level at times uniform in VP's t (closed form of score_sde's VP).
		v, err := NewSDEGrid(sde, GridVPMatched, sde.Horizon(), 1e-3, 7)
		if err != nil {
			t.Fatal(err)
		}
		vpInv := func(s float64) float64 { // t with √(e^{0.1t + 9.95t²} − 1) = s
			b := math.Log1p(s * s)
			return (-0.1 + math.Sqrt(0.01+4*9.95*b)) / (2 * 9.95)
		}
		tau0, tau1 := vpInv(sig(v[0])), vpInv(sig(v[7]))
		if !(math.Abs(tau0-1) <= 1e-9) {
			t.Errorf("%s vpmatched grid starts at VP time %g, want 1 (σ_VP(1) = %g is below σ at T)", kind, tau0, sig(v[0]))
		}
		if !(math.Abs(sig(v[7])-DefaultSigmaMin) <= 1e-6*DefaultSigmaMin) {
			t.Errorf("%s vpmatched grid ends at σ = %g, want %g", kind, sig(v[7]), DefaultSigmaMin)
		}
		quad, err := NewGrid(GridQuadratic, 1, tau1, 7) // VP's quadratic grid
		if err != nil {
			t.Fatal(err)
		}
		for i := range v {
			if got := vpInv(sig(v[i])); !(math.Abs(got-quad[i]) <= 1e-7*quad[i]) {
				t.Errorf("%s vpmatched point %d: VP time %.10g, want VP's quadratic grid's %.10g", kind, i, got, quad[i])
			}
		}
		// lambda: log σ falls by the same amount at every step, from σ at T to σ_min.
		l, err := NewSDEGrid(sde, GridLambda, sde.Horizon(), 1e-3, 7)
		if err != nil {
			t.Fatal(err)
		}
		step = math.Log(DefaultSigmaMin/sig(sde.Horizon())) / 7
		for i := 1; i < len(l); i++ {
			if d := math.Log(sig(l[i]) / sig(l[i-1])); !(math.Abs(d-step) <= 1e-6*math.Abs(step)) {
				t.Errorf("%s lambda step %d: Δlog σ %g, want %g", kind, i, d, step)
			}
		}
		// vplambda: at point i, the mean of VP's quadratic grid's fraction before λ_i (from VP's closed-form
		// inverse, u = 1 − ((τ − τ_N)/(τ_0 − τ_N))^{1/2}) and the λ-uniform grid's is i/N; so no step in λ is
		// longer than twice the λ-uniform grid's.
		const n = 24
		vl, err := NewSDEGrid(sde, GridVPLambda, sde.Horizon(), 1e-3, n)
		if err != nil {
			t.Fatal(err)
		}
		l0, lN := -math.Log(sig(vl[0])), -math.Log(sig(vl[n]))
		tau0, tauN := vpInv(sig(vl[0])), vpInv(sig(vl[n]))
		if !(math.Abs(sig(vl[n])-DefaultSigmaMin) <= 1e-6*DefaultSigmaMin) || !(math.Abs(tau0-1) <= 1e-9) {
			t.Errorf("%s vplambda grid from VP time %g to σ = %g, want 1 and %g", kind, tau0, sig(vl[n]), DefaultSigmaMin)
		}
		for i := 1; i < n; i++ {
			s := sig(vl[i])
			u := 1 - math.Sqrt((vpInv(s)-tauN)/(tau0-tauN))
			f := 0.5*u + 0.5*(-math.Log(s)-l0)/(lN-l0)
			if !(math.Abs(f-float64(i)/n) <= 1e-7) {
				t.Errorf("%s vplambda point %d: mean fraction %.9f, want %.9f", kind, i, f, float64(i)/n)
			}
		}
		for i := 1; i <= n; i++ {
			if d := math.Log(sig(vl[i-1]) / sig(vl[i])); !(d <= 2*(lN-l0)/n*(1+1e-6)) {
				t.Errorf("%s vplambda step %d: Δλ %g, longer than twice the λ-uniform step %g", kind, i, d, (lN-l0)/n)
			}
		}
	}
}

// scoreOnly hides an oracle's PredictX0, so that x̂₀ goes through its last-block score.
type scoreOnly struct{ o *hold.MixtureOracle }

func (s scoreOnly) Score(dst, x, t []float64) error { return s.o.Score(dst, x, t) }

// TestPredictX0FromScore: x̂₀ from the last-block score, (S + rᵀu)/(rᵀm_t), equals the mixture oracle's
// own posterior mean (computed from the components' posteriors, not from the score) for every SDE, at
// per-sample times spread over the range (1e-8 relative to the data scale).
func TestPredictX0FromScore(t *testing.T) {
	for name, sde := range xhatSDEs(t) {
		orc, err := hold.NewMixtureOracle(sde, hold.PaperMixture())
		if err != nil {
			t.Fatal(err)
		}
		const batch = 12
		n := sde.Blocks()
		x := make([]float64, batch*n)
		if err := sde.PriorSample(x, batch, rng.New(3)); err != nil {
			t.Fatal(err)
		}
		times := make([]float64, batch)
		for i := range times {
			times[i] = sde.Horizon() * math.Pow(1e-3, float64(i)/float64(batch-1)) // T down to T·1e-3
		}
		want, got := make([]float64, batch), make([]float64, batch)
		if err := PredictX0(sde, orc, want, x, times); err != nil {
			t.Fatal(err)
		}
		if err := PredictX0(sde, scoreOnly{orc}, got, x, times); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if !(math.Abs(got[i]-want[i]) <= 1e-8) {
				t.Errorf("%s t=%g: x̂₀ from the score %.12g, oracle %.12g", name, times[i], got[i], want[i])
			}
		}
		if err := PredictX0(sde, orc, want[:3], x, times); err == nil {
			t.Errorf("%s: mismatched lengths accepted", name)
		}
	}
}

// TestClippedScorer: with a bound no x̂₀ reaches, the clipped score is the inner score (1e-9 relative);
// with bound 0.5 it is −(Σ_t⁻¹(u − m_t·clip(x̂₀)))_n computed with an independent inverse of Σ_t and the
// oracle's own x̂₀ (1e-9 relative), for every SDE at times across the range.
func TestClippedScorer(t *testing.T) {
	for name, sde := range xhatSDEs(t) {
		orc, err := hold.NewMixtureOracle(sde, hold.PaperMixture())
		if err != nil {
			t.Fatal(err)
		}
		const batch = 10
		n := sde.Blocks()
		x := make([]float64, batch*n)
		if err := sde.PriorSample(x, batch, rng.New(8)); err != nil {
			t.Fatal(err)
		}
		times := make([]float64, batch)
		for i := range times {
			times[i] = sde.Horizon() * math.Pow(1e-3, float64(i)/float64(batch-1))
		}
		inner := make([]float64, batch)
		if err := orc.Score(inner, x, times); err != nil {
			t.Fatal(err)
		}
		wide, err := NewClippedScorer(sde, scoreOnly{orc}, 1e9)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]float64, batch)
		if err := wide.Score(got, x, times); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if !(math.Abs(got[i]-inner[i]) <= 1e-9*math.Max(1, math.Abs(inner[i]))) {
				t.Errorf("%s t=%g: unclipped %.12g, inner score %.12g", name, times[i], got[i], inner[i])
			}
		}
		tight, _ := NewClippedScorer(sde, orc, 0.5)
		if err := tight.Score(got, x, times); err != nil {
			t.Fatal(err)
		}
		x0 := make([]float64, batch)
		if err := orc.PredictX0(x0, x, times); err != nil {
			t.Fatal(err)
		}
		for b, tb := range times {
			k := sde.Kernel(tb)
			sig := fromHold(&k.Sigma, n)
			inv, err := inverse(&sig, n)
			if err != nil {
				t.Fatal(err)
			}
			c := math.Max(-0.5, math.Min(0.5, x0[b]))
			var want float64
			for j := 0; j < n; j++ {
				want -= inv[n-1][j] * (x[b*n+j] - k.Mean.At(j, 0)*c)
			}
			if !(math.Abs(got[b]-want) <= 1e-9*math.Max(1, math.Abs(want))) {
				t.Errorf("%s t=%g: clipped score %.12g, independent %.12g", name, tb, got[b], want)
			}
		}
	}
	if _, err := NewClippedScorer(nil, nil, math.NaN()); err == nil {
		t.Error("NaN bound accepted")
	}
}
