package hold

import (
	"math"
	"math/big"
	"testing"
)

// bigSigma is σ = 1/|L⁻¹m| from a 25-digit reference vector (m = expF's first column, L = chol), by
// forward substitution in 200-bit floats.
func bigSigma(t *testing.T, v vecForward) float64 {
	t.Helper()
	parse := func(s string) *big.Float {
		f, _, err := big.ParseFloat(s, 10, 200, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	n := len(v.Chol)
	a := make([]*big.Float, n)
	snr := new(big.Float).SetPrec(200)
	for i := range n {
		x := parse(v.ExpF[i][0])
		for j := range i {
			x.Sub(x, new(big.Float).SetPrec(200).Mul(parse(v.Chol[i][j]), a[j]))
		}
		a[i] = x.Quo(x, parse(v.Chol[i][i]))
		snr.Add(snr, new(big.Float).SetPrec(200).Mul(a[i], a[i]))
	}
	s, _ := snr.Float64()
	return 1 / math.Sqrt(s)
}

// TestNoiseLevelVectors: σ_t of HOLD-2/3/4 (L = 2, α = 0.02) against the 160-digit dense scans of
// testdata/dense_vectors.json over t ∈ [1e-5, 12], σ from 10⁻¹⁸ to 10²: relative error ≤ 1e-10 (the worst, 5e-11, is HOLD-4's at t = 10⁻⁵).
func TestNoiseLevelVectors(t *testing.T) {
	vec := loadVectors(t, "dense_vectors.json")
	for order, name := range map[int]string{2: "hold2", 3: "hold3", 4: "hold4"} {
		cfg := DefaultConfig(KindHOLD)
		cfg.Order, cfg.T = order, 12
		sde, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		checked, worst := 0, 0.0
		for _, v := range vec[name].Forward {
			if v.Alpha != "2.0e-2" || v.L != "2.0" {
				continue
			}
			tt, _, _ := big.ParseFloat(v.T, 10, 64, big.ToNearestEven)
			tv, _ := tt.Float64()
			want := bigSigma(t, v)
			got := sde.NoiseLevel(tv)
			rel := math.Abs(got/want - 1)
			worst = max(worst, rel)
			if !(rel <= 1e-10) {
				t.Errorf("%s t = %g: σ = %.17g, want %.17g (relative error %.2g)", name, tv, got, want, rel)
			}
			checked++
		}
		if checked < 10 {
			t.Fatalf("%s: only %d reference points with α = 0.02", name, checked)
		}
		t.Logf("%s: %d times, worst relative error %.2g", name, checked, worst)
	}
}

// TestNoiseLevelClosedForms: VP's σ_t = √(e^{∫β} − 1) and VE's σ(t) = σ_min(σ_max/σ_min)^t.
func TestNoiseLevelClosedForms(t *testing.T) {
	vp, _ := New(DefaultConfig(KindVP))
	ve, _ := New(DefaultConfig(KindVE))
	for _, tv := range []float64{1e-5, 3e-4, 0.01, 0.1, 0.5, 1} {
		tau := 0.1*tv + 0.5*(20-0.1)*tv*tv
		if got, want := vp.NoiseLevel(tv), math.Sqrt(math.Expm1(tau)); !(math.Abs(got/want-1) <= 1e-12) {
			t.Errorf("VP t = %g: σ = %.17g, want %.17g", tv, got, want)
		}
		if got, want := ve.NoiseLevel(tv), 0.01*math.Pow(5000, tv); !(math.Abs(got/want-1) <= 1e-12) {
			t.Errorf("VE t = %g: σ = %.17g, want %.17g", tv, got, want)
		}
	}
}

// TestSigmaMap: the tabulated σ_t and t(σ) against NoiseLevel for every SDE kind with its defaults
// (HOLD of orders 2–4): σ(t(σ)) = σ and the map's σ_t = NoiseLevel(t) to 1e-9 relative, on 400 points
// each; the map covers [t_min, T]. A 0.1 % error in t moves σ by at least 0.05 %.
func TestSigmaMap(t *testing.T) {
	for _, cfg := range sigmaConfigs() {
		sde, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		m, err := sde.NewSigmaMap()
		if err != nil {
			t.Fatal(err)
		}
		name := cfg.Kind + string(rune('0'+cfg.Order))
		if m.TLo != sde.MinTime() || m.THi != sde.Horizon() {
			t.Errorf("%s: map covers [%g, %g], want [%g, %g]", name, m.TLo, m.THi, sde.MinTime(), sde.Horizon())
		}
		lo, hi := m.Range()
		worstInv, worstFwd := 0.0, 0.0
		for i := range 400 {
			u := (float64(i) + 0.37) / 400
			sigma := lo * math.Pow(hi/lo, u)
			tv := m.Time(sigma)
			worstInv = max(worstInv, math.Abs(sde.NoiseLevel(tv)/sigma-1))
			tf := m.TLo * math.Pow(m.THi/m.TLo, u)
			worstFwd = max(worstFwd, math.Abs(m.Sigma(tf)/sde.NoiseLevel(tf)-1))
		}
		if !(worstInv <= 1e-9) || !(worstFwd <= 1e-9) {
			t.Errorf("%s: worst relative error of σ(t(σ)) %.2g, of the map's σ_t %.2g (want ≤ 1e-9)", name, worstInv, worstFwd)
		}
		t.Logf("%s: σ ∈ [%.3g, %.3g]; worst relative error %.2g inverse, %.2g forward", name, lo, hi, worstInv, worstFwd)
	}
}

func sigmaConfigs() []Config {
	var out []Config
	for _, order := range []int{2, 3, 4} {
		c := DefaultConfig(KindHOLD)
		c.Order = order
		out = append(out, c)
	}
	return append(out, DefaultConfig(KindCLD), DefaultConfig(KindVP), DefaultConfig(KindVE))
}
