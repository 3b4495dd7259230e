package hold

import (
	"math"
	"math/rand/v2"

	hrng "holdgo/rng"
	"testing"
)

func normals64(n int, rng *rand.Rand) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// TestSplitting: the A-step's generator plus the B-step's drift is the reverse drift,
// (ExpA(h)x − x)/h + (BStep(x) − x)/h → ReverseDrift(x, score) as h → 0, and the probability-flow drift
// differs from it by ½g²·score on the last block.
func TestSplitting(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, c := range allKinds(t) {
		s := c.sde
		n, batch, d := s.Blocks(), 2, 3
		for _, tm := range c.times {
			x, score := normals64(batch*n*d, rng), normals64(batch*d, rng)
			times := []float64{tm, tm}
			rev := make([]float64, len(x))
			pf := make([]float64, len(x))
			if err := s.ReverseDrift(rev, x, score, times); err != nil {
				t.Fatal(err)
			}
			if err := s.ProbabilityFlowDrift(pf, x, score, times); err != nil {
				t.Fatal(err)
			}
			// the split generator at step h, (A(h)x − x)/h + (B(h)x − x)/h = ReverseDrift + O(h);
			// Richardson extrapolation 2D(h) − D(2h) removes the O(h) term
			splitAt := func(h float64) []float64 {
				ya := append([]float64(nil), x...)
				if err := s.ApplyAStep(ya, batch, s.AStep(tm, h), nil); err != nil {
					t.Fatal(err)
				}
				yb := append([]float64(nil), x...)
				if err := s.BStep(yb, score, batch, tm, h); err != nil {
					t.Fatal(err)
				}
				for i := range ya {
					ya[i] = (ya[i]-x[i])/h + (yb[i]-x[i])/h
				}
				return ya
			}
			h := 1e-5 * math.Min(1, tm)
			fine, coarse := splitAt(h), splitAt(2*h)
			g2 := s.Diffusion(tm) * s.Diffusion(tm)
			var worst, size float64
			for i := range x {
				size = math.Max(size, math.Abs(rev[i]))
			}
			for i := range x {
				split := 2*fine[i] - coarse[i]
				worst = math.Max(worst, math.Abs(split-rev[i])/size)
				want := rev[i]
				if (i/d)%n == n-1 {
					want -= 0.5 * g2 * score[(i/(n*d))*d+i%d]
				}
				worst = math.Max(worst, math.Abs(pf[i]-want)/size)
			}
			if !(worst <= 1e-5) {
				t.Errorf("%s t=%g: A+B vs reverse drift: relative deviation %.3e", c.name, tm, worst)
			}
		}
	}
}

// TestForwardDynamicsCLD: CLD's drift and diffusion are CLD-SGM's (docs/math.md#cld):
// dx = M⁻¹βv, dv = −βx − ΓM⁻¹βv, g = √(2Γβ). HOLD and VP diffusions: √(2ξ/L) = √6 and √β(t).
func TestForwardDynamicsCLD(t *testing.T) {
	s := mustNew(t, DefaultConfig(KindCLD))
	x := []float64{0.3, -0.7, 1.1, 0.25} // one sample, d = 2: x = (0.3, −0.7), v = (1.1, 0.25)
	dst := make([]float64, 4)
	if err := s.ForwardDrift(dst, x, []float64{0.5}); err != nil {
		t.Fatal(err)
	}
	want := []float64{16 * 1.1, 16 * 0.25, -4*0.3 - 16*1.1, 4*0.7 - 16*0.25}
	for i := range want {
		if !(math.Abs(dst[i]-want[i]) <= 1e-13) {
			t.Errorf("CLD drift[%d] = %g, want %g", i, dst[i], want[i])
		}
	}
	if g := s.Diffusion(0.5); !(math.Abs(g-math.Sqrt(8)) <= 1e-14) {
		t.Errorf("CLD diffusion %g, want √8", g)
	}
	if g := mustNew(t, DefaultConfig(KindHOLD)).Diffusion(3); !(math.Abs(g-math.Sqrt(6)) <= 1e-14) {
		t.Errorf("HOLD diffusion %g, want √6", g)
	}
	if g := mustNew(t, DefaultConfig(KindVP)).Diffusion(0.5); !(math.Abs(g-math.Sqrt(0.1+0.5*19.9)) <= 1e-14) {
		t.Errorf("VP diffusion %g", g)
	}
}

// TestAStepExact: the A-step is an exact Gaussian transition: it keeps the prior invariant
// (ExpA·P⁻¹·ExpAᵀ + CholA·CholAᵀ = P⁻¹, all but VE) and composes, A(t, h) = A(t − h/2, h/2)∘A(t, h/2),
// in mean map and covariance.
func TestAStepExact(t *testing.T) {
	for _, c := range allKinds(t) {
		s := c.sde
		n := s.Blocks()
		for _, h := range []float64{1e-4, 0.01, 0.3} {
			tm := c.times[len(c.times)-1]
			full := s.AStep(tm, h)
			first, second := s.AStep(tm, h/2), s.AStep(tm-h/2, h/2)
			cov := func(st Step) Matrix {
				m := matMul(&st.CholA, ptr(st.CholA.transpose()))
				return m
			}
			// composed: E2E1, E2 C1 E2ᵀ + C2
			e := matMul(&second.ExpA, &first.ExpA)
			c1 := cov(first)
			c2 := cov(second)
			composed := matMul(&second.ExpA, &c1)
			composed = matMul(&composed, ptr(second.ExpA.transpose()))
			want := cov(full)
			var worst float64
			for i := 0; i < n; i++ {
				for j := 0; j < n; j++ {
					worst = math.Max(worst, relErr(e.At(i, j), full.ExpA.At(i, j), 1))
					got := composed.At(i, j) + c2.At(i, j)
					worst = math.Max(worst, relErr(got, want.At(i, j), math.Sqrt(want.At(i, i)*want.At(j, j))))
				}
			}
			if c.name != "ve" {
				var prior Matrix
				prior.N = n
				for i := 0; i < n; i++ {
					prior.Set(i, i, s.PriorVariance(i))
				}
				kept := matMul(&full.ExpA, &prior)
				kept = matMul(&kept, ptr(full.ExpA.transpose()))
				for i := 0; i < n; i++ {
					for j := 0; j < n; j++ {
						worst = math.Max(worst, math.Abs(kept.At(i, j)+want.At(i, j)-prior.At(i, j))/prior.At(0, 0))
					}
				}
			}
			if !(worst <= 1e-12) {
				t.Errorf("%s h=%g: A-step composition/invariance error %.3e", c.name, h, worst)
			}
		}
	}
}

func ptr(m Matrix) *Matrix { return &m }

// TestBStepExact: BStepExact is the exact solution of ds/dτ = q(score + Λs) with the score frozen, and
// BStep its Euler step.
func TestBStepExact(t *testing.T) {
	s := mustNew(t, DefaultConfig(KindHOLD))     // q = 2ξ/L = 6, Λ = L = 2
	x := []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6} // B = 1, n = 3, d = 2
	score := []float64{-0.4, 0.9}
	euler, exact := append([]float64(nil), x...), append([]float64(nil), x...)
	if err := s.BStep(euler, score, 1, 2, 0.05); err != nil {
		t.Fatal(err)
	}
	if err := s.BStepExact(exact, score, 1, 2, 0.05); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		v, sc := x[4+i], score[i]
		wantExact := math.Exp(12*0.05)*(v+sc/2) - sc/2
		wantEuler := v + 6*0.05*(sc+2*v)
		if !(math.Abs(exact[4+i]-wantExact) <= 1e-14) || !(math.Abs(euler[4+i]-wantEuler) <= 1e-14) {
			t.Errorf("dim %d: exact %g (want %g), Euler %g (want %g)", i, exact[4+i], wantExact, euler[4+i], wantEuler)
		}
	}
	for i := 0; i < 4; i++ {
		if exact[i] != x[i] || euler[i] != x[i] {
			t.Errorf("B-step changed block %d", i/2)
		}
	}
	if err := s.BStep(euler, score[:1], 1, 2, 0.05); err == nil {
		t.Error("short score accepted")
	}
}

// TestPriorDensityAndSampling: log-density formula and sample moments of the prior.
func TestPriorDensityAndSampling(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, c := range allKinds(t) {
		s := c.sde
		n, batch, d := s.Blocks(), 4000, 5
		x := make([]float64, batch*n*d)
		if err := s.PriorSample(x, batch, hrng.New(rng.Uint64())); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < n; k++ {
			var sq float64
			for b := 0; b < batch; b++ {
				for i := 0; i < d; i++ {
					v := x[b*n*d+k*d+i]
					sq += v * v
				}
			}
			v := sq / float64(batch*d)
			if !(math.Abs(v/s.PriorVariance(k)-1) <= 0.05) { // standard error √(2/20000) = 1%
				t.Errorf("%s block %d: sample variance %g, prior %g", c.name, k, v, s.PriorVariance(k))
			}
		}
		logp := make([]float64, 2)
		if err := s.PriorLogDensity(logp, x[:2*n*d]); err != nil {
			t.Fatal(err)
		}
		var want float64
		for j := 0; j < n*d; j++ {
			v := s.PriorVariance(j / d)
			want += -0.5*math.Log(2*math.Pi*v) - x[j]*x[j]/(2*v)
		}
		if !(math.Abs(logp[0]-want) <= 1e-12*math.Abs(want)) {
			t.Errorf("%s: prior log-density %g, want %g", c.name, logp[0], want)
		}
	}
}

// TestOracleSampler: the oracle plugs into a sampler. Euler–Maruyama on the reverse SDE
// (ReverseDrift, Diffusion) with the exact score of Gaussian data, run from the prior at T to 1e-3 on a
// geometric grid, recovers the data's mean and standard deviation in the q block.
func TestOracleSampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	mix := Mixture{Weights: []float64{1}, Means: [][]float64{{0.3}}, Stds: []float64{0.1}}
	for _, c := range allKinds(t) {
		s := c.sde
		o, err := NewMixtureOracle(s, mix)
		if err != nil {
			t.Fatal(err)
		}
		n, batch, steps := s.Blocks(), 4000, 300
		x := make([]float64, batch*n)
		if err := s.PriorSample(x, batch, hrng.New(rng.Uint64())); err != nil {
			t.Fatal(err)
		}
		if c.name == "ve" { // VE's prior N(0, σ_max²) is only approximately p_T: start from p_T itself
			k := s.Kernel(s.Horizon())
			for b := range x {
				x[b] = 0.3 + math.Sqrt(k.Sigma.At(0, 0)+0.01)*rng.NormFloat64()
			}
		}
		score := make([]float64, batch)
		times := make([]float64, batch)
		drift := make([]float64, len(x))
		// geometric grid from T down to 1e-3 (docs/math.md#stiffness: h ≲ 0.2–0.4·t near the data)
		ratio := math.Pow(s.Horizon()/1e-3, 1/float64(steps))
		tm := s.Horizon()
		for step := 0; step < steps; step++ {
			h := tm * (1 - 1/ratio)
			for i := range times {
				times[i] = tm
			}
			if err := o.Score(score, x, times); err != nil {
				t.Fatal(err)
			}
			if err := s.ReverseDrift(drift, x, score, times); err != nil {
				t.Fatal(err)
			}
			g := s.Diffusion(tm) * math.Sqrt(h)
			for i := range x {
				x[i] += h * drift[i]
			}
			for b := 0; b < batch; b++ {
				x[b*n+n-1] += g * rng.NormFloat64()
			}
			tm -= h
		}
		var mean, sq float64
		for b := 0; b < batch; b++ {
			mean += x[b*n] / float64(batch)
		}
		for b := 0; b < batch; b++ {
			sq += (x[b*n] - mean) * (x[b*n] - mean) / float64(batch-1)
		}
		std := math.Sqrt(sq)
		t.Logf("%s: sampled q mean %.4f (data 0.3), std %.4f (data 0.1)", c.name, mean, std)
		if !(math.Abs(mean-0.3) <= 0.01) || !(math.Abs(std/0.1-1) <= 0.04) {
			t.Errorf("%s: sampled mean %.4f, std %.4f; data 0.3, 0.1", c.name, mean, std)
		}
	}
}

// TestAStepWithNoise: ApplyAStep with noise against a plain per-element
// ExpA·x + CholA·z (At), and BStep against x_n + c·(score + Λ·x_n), for
// every SDE, on sizes that cover the SIMD body, its tail and several
// worker chunks.
func TestAStepWithNoise(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, c := range allKinds(t) {
		s := c.sde
		n := s.Blocks()
		for _, shape := range [][2]int{{1, 1}, {3, 17}, {5, 2}, {400, 3}, {2, 300}} {
			batch, d := shape[0], shape[1]
			tm, h := c.times[len(c.times)/2], 0.01
			st := s.AStep(tm, h)
			x, z := normals64(batch*n*d, rng), normals64(batch*n*d, rng)
			got := append([]float64(nil), x...)
			if err := s.ApplyAStep(got, batch, st, z); err != nil {
				t.Fatal(err)
			}
			for b := 0; b < batch; b++ {
				for i := 0; i < d; i++ {
					for r := 0; r < n; r++ {
						want := 0.0
						for k := 0; k < n; k++ {
							want += st.ExpA.At(r, k)*x[(b*n+k)*d+i] + st.CholA.At(r, k)*z[(b*n+k)*d+i]
						}
						if g := got[(b*n+r)*d+i]; !(math.Abs(g-want) <= 1e-14*(1+math.Abs(want))) {
							t.Fatalf("%s %v: A-step [%d][%d][%d] = %v, want %v", c.name, shape, b, r, i, g, want)
						}
					}
				}
			}
			score := normals64(batch*d, rng)
			got = append([]float64(nil), x...)
			if err := s.BStep(got, score, batch, tm, h); err != nil {
				t.Fatal(err)
			}
			cf := s.noiseUser * s.clock.step(tm, h)
			for b := 0; b < batch; b++ {
				for k := 0; k < n; k++ {
					for i := 0; i < d; i++ {
						j := (b*n+k)*d + i
						want := x[j]
						if k == n-1 {
							want += cf * (score[b*d+i] + s.splitUser*x[j])
						}
						if !(math.Abs(got[j]-want) <= 1e-14*(1+math.Abs(want))) {
							t.Fatalf("%s %v: B-step [%d][%d][%d] = %v, want %v", c.name, shape, b, k, i, got[j], want)
						}
					}
				}
			}
		}
	}
}
