package hold

import (
	"math"
	"math/rand/v2"
	"testing"

	"holdgo/internal/linref"
)

// precondRef is the preconditioning of one time computed independently of EDMPrecond: σ, toC and
// r = Σ⁻¹e_n from the kernel's mean and covariance by internal/linref, c_in, c_skip, c_out from EDM's
// Table 1.
type precondRef struct {
	m, toC, r        []float64
	rm, sigma2, ell  float64
	cIn, cSkip, cOut float64
	sigmaMat         [][]float64
}

func newPrecondRef(sde *SDE, t, sd float64) precondRef {
	k := sde.Kernel(t)
	n := sde.Blocks()
	ref := precondRef{m: make([]float64, n), sigmaMat: make([][]float64, n)}
	en := make([]float64, n)
	en[n-1] = 1
	for i := range n {
		ref.m[i] = k.Mean.At(i, 0)
		ref.sigmaMat[i] = make([]float64, n)
		for j := range n {
			ref.sigmaMat[i][j] = k.Sigma.At(i, j)
		}
	}
	x := linref.Solve(ref.sigmaMat, ref.m)
	ref.r = linref.Solve(ref.sigmaMat, en)
	var snr float64
	for i := range n {
		snr += ref.m[i] * x[i]
		ref.rm += ref.r[i] * ref.m[i]
	}
	ref.sigma2 = 1 / snr
	ref.toC = make([]float64, n)
	for i := range n {
		ref.toC[i] = x[i] * ref.sigma2
	}
	s := math.Sqrt(ref.sigma2)
	ref.cIn = 1 / math.Sqrt(ref.sigma2+sd*sd)
	ref.cSkip = sd * sd / (ref.sigma2 + sd*sd)
	ref.cOut = s * sd / math.Sqrt(ref.sigma2+sd*sd)
	return ref
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// mixturePosteriorMean is E[q0 | c] for a 1-D Gaussian mixture and c | q0 ~ N(q0, σ²).
func mixturePosteriorMean(mix Mixture, c, sigma2 float64) float64 {
	var num, den, lmax float64
	logw := make([]float64, len(mix.Weights))
	for k, w := range mix.Weights {
		v := mix.Stds[k]*mix.Stds[k] + sigma2
		d := c - mix.Means[k][0]
		logw[k] = math.Log(w) - 0.5*math.Log(v) - d*d/(2*v)
		if k == 0 || logw[k] > lmax {
			lmax = logw[k]
		}
	}
	for k := range mix.Weights {
		v := mix.Stds[k]*mix.Stds[k] + sigma2
		w := math.Exp(logw[k] - lmax)
		mu := mix.Means[k][0] + mix.Stds[k]*mix.Stds[k]/v*(c-mix.Means[k][0])
		num += w * mu
		den += w
	}
	return num / den
}

// TestEDMPrecondOracle is the preconditioning's oracle test for HOLD-2/3/4, CLD and VP at times from
// σ ≈ 10⁻⁴ to the horizon. With the exact denoiser in place of the network:
//   - the derived score (rᵀm)·x̂₀ − rᵀu with x̂₀ = c_skip·c + c_out·F equals MixtureOracle's exact
//     score of the paper's mixture to 1e-10;
//   - on point-mass data (x̂₀ = q0) the training target of every draw (Draw) is that F, so the loss
//     is zero (to 1e-20 of its scale), and for any other F the loss (F − F*)² is EDM's λ(σ)‖x̂₀ − q0‖²;
//   - the input drawn from (q0, ε) equals the input read from u = m q0 + Lε, and it is (c_in·c, w)
//     with c = q0 + σ·noise and w ~ N(0, I) independent of q0 and c (checkInput).
//
// F is formed with c_skip and c_out from EDM's formulas, not EDMPrecond's, so an error of 0.1 % in
// either fails the test.
func TestEDMPrecondOracle(t *testing.T) {
	const sd = EDMSigmaData
	mix := PaperMixture()
	r := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range precondConfigs() {
		sde, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := sde.Blocks()
		oracle, err := NewMixtureOracle(sde, mix)
		if err != nil {
			t.Fatal(err)
		}
		for _, frac := range []float64{0.003, 0.02, 0.1, 0.3, 0.7, 1} {
			tv := frac * sde.Horizon()
			p, err := sde.EDMPrecond(tv, sd)
			if err != nil {
				t.Fatal(err)
			}
			ref := newPrecondRef(sde, tv, sd)
			if rel := math.Abs(p.Sigma*p.Sigma/ref.sigma2 - 1); !(rel <= 1e-10) {
				t.Errorf("%s t = %g: σ² %.15g, reference %.15g", cfg.Kind, tv, p.Sigma*p.Sigma, ref.sigma2)
			}
			// The input map: row 0 reads c_in·c, rows 1… an orthonormal, q0-free complement.
			checkInput(t, cfg, tv, p, ref)
			k := sde.Kernel(tv)
			for range 20 {
				// A state from the mixture: u = m q0 + L z.
				comp := r.IntN(len(mix.Weights))
				q0 := mix.Means[comp][0] + mix.Stds[comp]*r.NormFloat64()
				u := make([]float64, n)
				z := make([]float64, n)
				for i := range n {
					z[i] = r.NormFloat64()
				}
				for i := range n {
					u[i] = ref.m[i] * q0
					for j := 0; j <= i; j++ {
						u[i] += k.Chol.At(i, j) * z[j]
					}
				}
				c := dot(ref.toC, u)
				x0 := mixturePosteriorMean(mix, c, ref.sigma2)
				f := (x0 - ref.cSkip*c) / ref.cOut
				derived := p.Score(u, p.X0(u, f))
				exact := make([]float64, 1)
				if err := oracle.Score(exact, u, []float64{tv}); err != nil {
					t.Fatal(err)
				}
				scale := math.Abs(exact[0]) + math.Abs(ref.rm)*math.Sqrt(ref.sigma2)
				if !(math.Abs(derived-exact[0]) <= 1e-10*scale) {
					t.Errorf("%s%d t = %g: derived score %.15g, exact %.15g", cfg.Kind, cfg.Order, tv, derived, exact[0])
				}
				// Point mass at q0: x̂₀ = q0 exactly, so the target of the draw is F: the loss is zero.
				in := make([]float64, n)
				target := p.Draw(in, q0, z)
				fStar := (q0 - ref.cSkip*c) / ref.cOut
				if d := target - fStar; !(d*d <= 1e-20*(fStar*fStar+1)) {
					t.Errorf("%s%d t = %g: loss of the exact denoiser on a point mass %.3g, want 0", cfg.Kind, cfg.Order, tv, d*d)
				}
				// Any output: the loss (F − F*)² is EDM's λ(σ)·(x̂₀ − q0)², λ = 1/c_out².
				fAny := target + r.NormFloat64()
				got := (fAny - target) * (fAny - target)
				dx := p.X0(u, fAny) - q0
				if want := dx * dx / (ref.cOut * ref.cOut); !(math.Abs(got-want) <= 1e-6*want+1e-18) {
					t.Errorf("%s%d t = %g: loss %.15g, EDM's λ(x̂₀ − q0)² %.15g", cfg.Kind, cfg.Order, tv, got, want)
				}
				// The input drawn from (q0, ε) is the input read from u.
				fromU := make([]float64, n)
				p.Input(fromU, u)
				for j := range n {
					if !(math.Abs(fromU[j]-in[j]) <= 1e-8*(1+math.Abs(in[j]))) {
						t.Errorf("%s%d t = %g: input %d from the state %.12g, from the draw %.12g", cfg.Kind, cfg.Order, tv, j, fromU[j], in[j])
					}
				}
			}
		}
	}
}

func checkInput(t *testing.T, cfg Config, tv float64, p Precond, ref precondRef) {
	t.Helper()
	n := len(ref.m)
	row := func(j int) []float64 { return p.In[j][:n] }
	if got := dot(row(0), ref.m); !(math.Abs(got/ref.cIn-1) <= 1e-10) {
		t.Errorf("%s t = %g: input 0 reads q0 with %.15g, want c_in = %.15g", cfg.Kind, tv, got, ref.cIn)
	}
	cov := func(a, b []float64) float64 {
		var s float64
		for i := range n {
			for j := range n {
				s += a[i] * ref.sigmaMat[i][j] * b[j]
			}
		}
		return s
	}
	if got, want := cov(row(0), row(0)), ref.cIn*ref.cIn*ref.sigma2; !(math.Abs(got/want-1) <= 1e-8) {
		t.Errorf("%s t = %g: input 0's noise variance %.15g, want c_in²σ² = %.15g", cfg.Kind, tv, got, want)
	}
	for j := 1; j < n; j++ {
		if got := dot(row(j), ref.m); !(math.Abs(got) <= 1e-8*math.Sqrt(dot(row(j), row(j))*dot(ref.m, ref.m))) {
			t.Errorf("%s t = %g: ancillary input %d reads q0 with %.3g", cfg.Kind, tv, j, got)
		}
		for i := 0; i < n; i++ {
			want := 0.0
			if i == j {
				want = 1
			}
			if i == 0 {
				continue // c and w are independent: Σ-covariance of row 0 with row j is 0 up to c_in
			}
			if got := cov(row(j), row(i)); !(math.Abs(got-want) <= 1e-8) {
				t.Errorf("%s t = %g: Cov(w%d, w%d) = %.3g, want %g", cfg.Kind, tv, j, i, got, want)
			}
		}
		if got := cov(row(j), row(0)); !(math.Abs(got) <= 1e-8*ref.cIn*math.Sqrt(ref.sigma2)) {
			t.Errorf("%s t = %g: Cov(w%d, c) = %.3g, want 0", cfg.Kind, tv, j, got)
		}
	}
}

func precondConfigs() []Config {
	var out []Config
	for _, order := range []int{2, 3, 4} {
		c := DefaultConfig(KindHOLD)
		c.Order = order
		out = append(out, c)
	}
	return append(out, DefaultConfig(KindCLD), DefaultConfig(KindVP))
}
