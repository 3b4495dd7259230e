package train

import (
	"math"
	"slices"
	"strings"
	"testing"

	"holdgo/hold"
	"holdgo/internal/linref"
	"holdgo/rng"
)

// independentSigma is σ_t = (mᵀΣ⁻¹m)^(−1/2) from the kernel's mean column and covariance as `holdctl
// sde` prints them, solved by internal/linref: no Cholesky factor, no σ-map.
func independentSigma(sde *hold.SDE, t float64) float64 {
	k := sde.Kernel(t)
	n := sde.Blocks()
	a := make([][]float64, n)
	m := make([]float64, n)
	for i := range n {
		a[i] = make([]float64, n)
		for j := range n {
			a[i][j] = k.Sigma.At(i, j)
		}
		m[i] = k.Mean.At(i, 0)
	}
	var q float64
	for i, x := range linref.Solve(a, m) {
		q += m[i] * x
	}
	return 1 / math.Sqrt(q)
}

// normQuantile is the standard normal quantile.
func normQuantile(p float64) float64 { return -math.Sqrt2 * math.Erfcinv(2*p) }

// TestSigmaTimesEDM is the acceptance test of --times sigma:edm: for HOLD-2/3/4, CLD and VP, 20,000
// training times drawn as the loss draws them are mapped to σ independently (independentSigma). Each
// draw's σ equals the one the sampler aimed at to 1e-7 in ln σ (a 0.1 % error in t(σ) is ≥ 5e-4
// there); at most 5 % of the draws are below σ = 0.002; the quantiles of log10 σ agree across the
// SDEs, and with EDM's ln σ ~ N(−1.2, 1.2²), within 0.05.
func TestSigmaTimesEDM(t *testing.T) {
	const n = 20000
	probs := []float64{0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99}
	var quantiles [][]float64
	for _, cfg := range []hold.Config{holdOrder(2), holdOrder(3), holdOrder(4), hold.DefaultConfig(hold.KindCLD), hold.DefaultConfig(hold.KindVP)} {
		sde, err := hold.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		name := sdeName(sde)
		s, err := newTimeSampler(sde, TimeSampling{Scheme: "sigma:edm"})
		if err != nil {
			t.Fatal(err)
		}
		u := rng.Stream{Key: 11, Step: 3, ID: rng.StreamTimes}
		times := make([]float64, n)
		s.fill(times, u, 0)
		lg := make([]float64, n)
		below, worst := 0, 0.0
		for i, tv := range times {
			sigma := independentSigma(sde, tv)
			x, _ := s.draw(u.Float64(uint64(i)))
			worst = max(worst, math.Abs(math.Log(sigma)-x))
			lg[i] = math.Log10(sigma)
			if sigma < EDMSigmaMin {
				below++
			}
		}
		if !(worst <= 1e-7) {
			t.Errorf("%s: a draw's σ differs from its target by %.3g in ln σ", name, worst)
		}
		if share := float64(below) / n; !(share <= 0.05) {
			t.Errorf("%s: %.1f %% of the draws below σ = %g (want ≤ 5 %%)", name, 100*share, EDMSigmaMin)
		}
		slices.Sort(lg)
		q := make([]float64, len(probs))
		for i, p := range probs {
			q[i] = lg[int(p*n)]
			want := (EDMLogSigmaMean + EDMLogSigmaStd*normQuantile(p)) / math.Ln10
			if !(math.Abs(q[i]-want) <= 0.05) {
				t.Errorf("%s: %g quantile of log10 σ %.3f, EDM's %.3f", name, p, q[i], want)
			}
		}
		quantiles = append(quantiles, q)
		t.Logf("%s: worst |Δ ln σ| %.2g, log10 σ quantiles %.3f", name, worst, q)
	}
	for i, p := range probs {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, q := range quantiles {
			lo, hi = min(lo, q[i]), max(hi, q[i])
		}
		if !(hi-lo <= 0.05) {
			t.Errorf("the %g quantiles of log10 σ spread over %.3f across SDEs (want ≤ 0.05)", p, hi-lo)
		}
	}
}

func holdOrder(order int) hold.Config {
	c := hold.DefaultConfig(hold.KindHOLD)
	c.Order = order
	return c
}

// TestSigmaTimesLaws: sigma:loguniform:A,B and sigma:vp follow their laws on an SDE whose noise range
// holds them (Kolmogorov–Smirnov distance of ln σ against the exact CDF, 20,000 draws, ≤ 0.015), and
// sigma:vp on VP itself gives uniform times on [t_min, T].
func TestSigmaTimesLaws(t *testing.T) {
	const n = 20000
	hold3, _ := hold.New(hold.DefaultConfig(hold.KindHOLD))
	vp, _ := hold.New(hold.DefaultConfig(hold.KindVP))
	u := rng.Stream{Key: 5, ID: rng.StreamTimes}
	lnSigmas := func(sde *hold.SDE, scheme string) ([]float64, []float64) {
		s, err := newTimeSampler(sde, TimeSampling{Scheme: scheme})
		if err != nil {
			t.Fatal(err)
		}
		times := make([]float64, n)
		s.fill(times, u, 0)
		x := make([]float64, n)
		for i, tv := range times {
			x[i] = math.Log(independentSigma(sde, tv))
		}
		return x, times
	}
	x, _ := lnSigmas(hold3, "sigma:loguniform:0.01,10")
	la, lb := math.Log(0.01), math.Log(10)
	if d := ksDistance(x, func(v float64) float64 { return min(max((v-la)/(lb-la), 0), 1) }); !(d <= 0.015) {
		t.Errorf("sigma:loguniform:0.01,10 on HOLD-3: KS distance %.4f", d)
	}
	_, times := lnSigmas(vp, "sigma:vp")
	lo, hi := vp.MinTime(), vp.Horizon()
	if d := ksDistance(times, func(v float64) float64 { return (v - lo) / (hi - lo) }); !(d <= 0.015) {
		t.Errorf("sigma:vp on VP: times are not uniform (KS distance %.4f)", d)
	}
	// On HOLD-3, sigma:vp's σ follows VP's uniform times' σ law, truncated to HOLD-3's range.
	x, _ = lnSigmas(hold3, "sigma:vp")
	_, hiSigma := mustMap(t, hold3).Range()
	tHi := mustMap(t, vp).Time(hiSigma)
	cdf := func(v float64) float64 {
		tv := mustMap(t, vp).Time(math.Exp(v))
		return min(max((tv-lo)/(tHi-lo), 0), 1)
	}
	if d := ksDistance(x, cdf); !(d <= 0.015) {
		t.Errorf("sigma:vp on HOLD-3: KS distance %.4f", d)
	}
}

var maps = map[*hold.SDE]*hold.SigmaMap{}

func mustMap(t *testing.T, sde *hold.SDE) *hold.SigmaMap {
	if m, ok := maps[sde]; ok {
		return m
	}
	m, err := sde.NewSigmaMap()
	if err != nil {
		t.Fatal(err)
	}
	maps[sde] = m
	return m
}

// TestParseTimes: the accepted --times values and one-line errors for the rest.
func TestParseTimes(t *testing.T) {
	for _, ok := range []string{"", "uniform", "mixed", "sigma:edm", "sigma:vp", "sigma:loguniform:0.002,80", "sigma:loguniform:1e-3, 5"} {
		if _, err := parseTimes(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"sigma:edm:junk", "sigma:loguniform:0,-1", "sigma:loguniform:1,1", "sigma:loguniform:nan,1",
		"sigma:loguniform:1,inf", "sigma:loguniform:1", "sigma:", "sigma:vp:2", "Mixed", "edm", "sigma:loguniform:-1,2"} {
		_, err := parseTimes(bad)
		if err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error of several lines: %v", bad, err)
		}
	}
	// A distribution that puts no mass on the SDE's noise levels.
	ve, _ := hold.New(hold.DefaultConfig(hold.KindVE))
	if _, err := newTimeSampler(ve, TimeSampling{Scheme: "sigma:loguniform:1e-6,1e-4"}); err == nil {
		t.Error("sigma:loguniform:1e-6,1e-4 on VE (σ ≥ 0.01) accepted")
	} else {
		t.Log(err)
	}
}
