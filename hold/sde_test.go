package hold

import (
	"math"
	"strings"
	"testing"
)

func mustNew(t *testing.T, cfg Config) *SDE {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConfigValidation(t *testing.T) {
	for _, kind := range []string{KindHOLD, KindCLD, KindVP, KindVE} {
		if err := DefaultConfig(kind).Validate(); err != nil {
			t.Errorf("default %s config: %v", kind, err)
		}
	}
	bad := []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Kind = "vpx" }, "unknown SDE kind"},
		{func(c *Config) { c.Order = 5 }, "order"},
		{func(c *Config) { c.Order = 1 }, "order"},
		{func(c *Config) { c.L = 0 }, "L must be positive"},
		{func(c *Config) { c.L = math.NaN() }, "L must be positive"},
		{func(c *Config) { c.Alpha = -1e-3 }, "alpha"},
		{func(c *Config) { c.T = 1e-6 }, "must exceed t_min"},
		{func(c *Config) { c.TMin = 0 }, "t_min"},
		{func(c *Config) { c.Objective = "ism" }, "unknown objective"},
		{func(c *Config) { c.Objective = ObjectiveHSM }, "hsm is CLD's"},
	}
	for _, b := range bad {
		cfg := DefaultConfig(KindHOLD)
		b.edit(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("config %+v: error %v, want one mentioning %q", cfg, err, b.want)
		}
	}
	ve := DefaultConfig(KindVE)
	ve.SigmaMax = ve.SigmaMin
	if _, err := New(ve); err == nil {
		t.Error("VE with sigma_max = sigma_min accepted")
	}
}

// TestCLDGolden compares CLD against CLD-SGM's closed-form kernel (its mean and var formulas, evaluated
// exactly; docs/math.md#cld) for β = 4, M⁻¹ = 4, γ = 0.04, HSM, whose Σ includes CLD-SGM's
// numerical_eps = 1e-9 on the diagonal.
// The table has 9 digits; its Sxx at t = 1e-5 is itself 1.4e-8 off (mpmath at 60 digits gives
// Sxx = 2.56641628028e-10 before the jitter, as computed here), hence the 2e-8 limit.
func TestCLDGolden(t *testing.T) {
	s := mustNew(t, DefaultConfig(KindCLD))
	const eps = 1e-9
	golden := []struct{ t, sxx, sxv, svv, ell, axx, axv, avx float64 }{
		{1e-5, 1.25664161e-09, 1.60601502e-06, 1.00767886e-02, 1.11634214e+01, 0.999999997, 1.59987201e-04, -3.99968001e-05},
		{1e-3, 3.19489280e-06, 2.19184837e-04, 1.75576309e-02, 1.99184656e+01, 0.999968170, 1.58725106e-02, -3.96812766e-03},
		{0.01, 8.23914110e-04, 6.70807591e-03, 7.55354902e-02, 6.91379913e+00, 0.996965654, 1.47698615e-01, -3.69246539e-02},
		{0.1, 2.21810062e-01, 1.29859840e-01, 2.15758352e-01, 2.67518144e+00, 0.808792135, 7.18926343e-01, -1.79731586e-01},
		{0.5, 9.86460729e-01, 5.28689102e-03, 2.47933551e-01, 2.00843216e+00, 0.0915781944, 1.46525111e-01, -3.66312778e-02},
		{1, 9.99983971e-01, 7.07621179e-06, 2.49996877e-01, 2.00001249e+00, 3.01916365e-03, 5.36740205e-03, -1.34185051e-03},
	}
	var worst float64
	for _, g := range golden {
		k := s.Kernel(g.t)
		sxx, sxv, svv := k.Sigma.At(0, 0)+eps, k.Sigma.At(0, 1), k.Sigma.At(1, 1)+eps
		ellEps := math.Sqrt(sxx / (sxx*svv - sxv*sxv))
		for _, c := range [][2]float64{
			{sxx, g.sxx}, {sxv, g.sxv}, {svv, g.svv}, {ellEps, g.ell},
			{k.Mean.At(0, 0), g.axx}, {k.Mean.At(0, 1), g.axv}, {k.Mean.At(1, 0), g.avx},
		} {
			if e := math.Abs(c[0]/c[1] - 1); e > worst {
				worst = e
				t.Logf("t=%g: %.9e vs golden %.9e (rel %.2e)", g.t, c[0], c[1], e)
			}
		}
		if g.t >= 0.1 { // where the 1e-9 jitter is below the table's 9 digits
			worst = math.Max(worst, math.Abs(k.Ell/g.ell-1))
		}
	}
	t.Logf("CLD vs CLD-SGM golden table: worst relative error %.2e (table has 9 digits)", worst)
	if !(worst <= 2e-8) {
		t.Errorf("worst relative error %.3e", worst)
	}
}

// TestCLDAsHold2 checks the coordinate and time mapping of CLD onto the n = 2 chain against the
// HOLD-2 vectors (L = 1, α = γ = 0.04): CLD at t equals HOLD-2 at native time 8t with v = p/2.
func TestCLDAsHold2(t *testing.T) {
	s := mustNew(t, DefaultConfig(KindCLD))
	vec := loadVectors(t, "hold_vectors.json")["hold2"]
	scale := []float64{1, 0.5}
	w := worstTable{}
	for _, r := range vec.Forward {
		if r.L != "1" || r.Alpha != "0.04" {
			continue
		}
		k := s.Kernel(num(t, r.T) / 8)
		sig, ch, ex := numMat(t, r.Sigma), numMat(t, r.Chol), numMat(t, r.ExpF)
		for i := range sig {
			for j := range sig {
				sig[i][j] *= scale[i] * scale[j]
				ch[i][j] *= scale[i]
				ex[i][j] *= scale[i] / scale[j]
			}
		}
		w.add("cld sigma", covErr(&k.Sigma, sig))
		w.add("cld chol", rowErr(&k.Chol, ch))
		w.add("cld mean", rowErr(&k.Mean, ex))
		w.add("cld ell", relErr(k.Ell, num(t, r.Ell)/scale[1], 0))
	}
	w.check(t, func(string) float64 { return 1e-12 })
}

// TestVPVEClosedForm: VP and VE against score_sde's marginal_prob formulas.
func TestVPVEClosedForm(t *testing.T) {
	vp := mustNew(t, DefaultConfig(KindVP))
	ve := mustNew(t, DefaultConfig(KindVE))
	var worst float64
	for _, tm := range []float64{1e-5, 1e-3, 0.1, 0.5, 1} {
		logMean := -0.25*tm*tm*(20-0.1) - 0.5*tm*0.1
		std := math.Sqrt(-math.Expm1(2 * logMean))
		k := vp.Kernel(tm)
		worst = math.Max(worst, math.Abs(k.Mean.At(0, 0)/math.Exp(logMean)-1))
		worst = math.Max(worst, math.Abs(k.Chol.At(0, 0)/std-1))
		worst = math.Max(worst, math.Abs(k.Ell*std-1))
		sigma := 0.01 * math.Pow(50/0.01, tm)
		k = ve.Kernel(tm)
		worst = math.Max(worst, math.Abs(k.Mean.At(0, 0)-1))
		worst = math.Max(worst, math.Abs(k.Chol.At(0, 0)/sigma-1))
		// one reverse step from t to t − h of the A part adds variance σ(t)² − σ(t−h)²
		h := tm / 3
		st := ve.AStep(tm, h)
		prev := 0.01 * math.Pow(50/0.01, tm-h)
		lr := math.Log(50 / 0.01)
		added := 2 * prev * prev * math.Sinh(h*lr) * math.Exp(h*lr) // σ(t)² − σ(t−h)² without cancellation
		worst = math.Max(worst, math.Abs(st.CholA.At(0, 0)/math.Sqrt(added)-1))
	}
	t.Logf("VP/VE worst relative error %.2e", worst)
	if !(worst <= 1e-13) {
		t.Errorf("worst relative error %.3e", worst)
	}
}

// TestCLDAStep compares the CLD A-step with CLD-SGM's analytic half-step in the cancellation-free form of
// docs/math.md#cld (b = 2βh): Vxx = P(3, 2b), Vxv = −e^{−2b}b², Vvv = −expm1(−2b)/4 + e^{−2b}(b/2 − b²/2),
// mean_x = e^{−b}((1 + b)x − 2b·v), mean_v = e^{−b}((b/2)x + (1 − b)v).
func TestCLDAStep(t *testing.T) {
	s := mustNew(t, DefaultConfig(KindCLD))
	var worst float64
	for _, h := range []float64{1e-7, 1e-5, 1e-3, 0.01, 0.1, 0.5} {
		st := s.AStep(1, h)
		b := 8 * h
		z := 2 * b
		// P(3, z) = e^{−z} Σ_{k≥3} z^k/k!
		var p3, term float64 = 0, z * z * z / 6
		for k := 4; term > 1e-30*p3 || p3 == 0; k++ {
			p3 += term
			term *= z / float64(k)
		}
		p3 *= math.Exp(-z)
		e2 := math.Exp(-z)
		want := [2][2]float64{{p3, -e2 * b * b}, {-e2 * b * b, -math.Expm1(-z)/4 + e2*(b/2-b*b/2)}}
		mean := [2][2]float64{{math.Exp(-b) * (1 + b), -math.Exp(-b) * 2 * b}, {math.Exp(-b) * b / 2, math.Exp(-b) * (1 - b)}}
		for i := 0; i < 2; i++ {
			for j := 0; j < 2; j++ {
				var c float64
				for k := 0; k < 2; k++ {
					c += st.CholA.At(i, k) * st.CholA.At(j, k)
				}
				worst = math.Max(worst, relErr(c, want[i][j], math.Sqrt(want[i][i]*want[j][j])))
				worst = math.Max(worst, relErr(st.ExpA.At(i, j), mean[i][j], 1))
			}
		}
	}
	t.Logf("CLD A-step vs SSCS closed form: worst relative error %.2e", worst)
	if !(worst <= 1e-12) {
		t.Errorf("worst relative error %.3e", worst)
	}
}

// TestStationary: Σ_t → I/L and μ_t → 0 as t grows, for every α.
func TestStationary(t *testing.T) {
	for _, order := range []int{2, 3, 4} {
		for _, alpha := range []float64{0, 0.02, 0.5} {
			s := holdSDE(t, order, 2, alpha)
			prev := math.Inf(1)
			for _, tm := range []float64{1, 2, 4, 7, 12, 20} {
				k := s.Kernel(tm)
				var dev float64
				for i := 0; i < order; i++ {
					for j := 0; j < order; j++ {
						want := 0.0
						if i == j {
							want = 0.5
						}
						dev = math.Max(dev, math.Abs(k.Sigma.At(i, j)-want))
						dev = math.Max(dev, math.Abs(k.Mean.At(i, j)))
					}
				}
				if dev > prev {
					t.Errorf("HOLD-%d α=%g: deviation from the prior grows from %.3e to %.3e at t=%g", order, alpha, prev, dev, tm)
				}
				prev = dev
			}
			if !(prev <= 1e-7) {
				t.Errorf("HOLD-%d α=%g: deviation %.3e at t = 20", order, alpha, prev)
			}
		}
	}
}

// TestPriorKL: the bound of docs/math.md#prior-and-horizon against its figures, and the acceptance value at T = 7.
func TestPriorKL(t *testing.T) {
	cfg := DefaultConfig(KindHOLD) // L = 2, α = 0.02, T = 7
	kl, err := mustNew(t, cfg).PriorKL(0.25)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("HOLD-3 (L=2, α=0.02) prior mismatch at T=7, m2=0.25: %.3e nats/dim", kl)
	if !(kl < 1e-4 && kl > 0) {
		t.Errorf("prior KL %.3e, want in (0, 1e-4)", kl)
	}
	// docs/math.md#prior-and-horizon (L = 1, α = 0.04, images m2 = 0.25): bound 5.3e-3, 8.4e-5, 1.6e-6 at T = 3, 5, 7.
	for _, c := range []struct{ T, want float64 }{{3, 5.3e-3}, {5, 8.4e-5}, {7, 1.6e-6}} {
		cfg := DefaultConfig(KindHOLD)
		cfg.L, cfg.Alpha, cfg.T = 1, 0.04, c.T
		kl, _ := mustNew(t, cfg).PriorKL(0.25)
		if !(math.Abs(kl/c.want-1) <= 0.05) {
			t.Errorf("HOLD-3 T=%g: KL %.3e, want %.1e (docs/math.md)", c.T, kl, c.want)
		}
	}
	// CLD at T = 1: 2.0e-6 / 4.1e-6 / 8.2e-6 for m2 = 0.25 / 0.5 / 1 (docs/math.md#prior-and-horizon).
	cld := mustNew(t, DefaultConfig(KindCLD))
	for _, c := range []struct{ m2, want float64 }{{0.25, 2.0e-6}, {0.5, 4.1e-6}, {1, 8.2e-6}} {
		kl, _ := cld.PriorKL(c.m2)
		if !(math.Abs(kl/c.want-1) <= 0.05) {
			t.Errorf("CLD m2=%g: KL %.3e, want %.1e (docs/math.md)", c.m2, kl, c.want)
		}
	}
	// VE: Σ_T = σ_max², so the bound is ½·m2/σ_max².
	kl, _ = mustNew(t, DefaultConfig(KindVE)).PriorKL(0.25)
	if want := 0.5 * 0.25 / 2500; !(math.Abs(kl/want-1) <= 1e-9) {
		t.Errorf("VE KL %.6e, want %.6e", kl, want)
	}
	if _, err := cld.PriorKL(-1); err == nil {
		t.Error("negative second moment accepted")
	}
}
