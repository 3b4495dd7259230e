package hold

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestEulerMaruyamaMatchesKernel: a fine Euler–Maruyama simulation of the forward SDE (ForwardDrift and
// Diffusion) from a fixed q0, with the auxiliary blocks drawn from N(0, α/L), reproduces the marginal
// kernel's mean and covariance: every z-score |z| ≤ 4. Standard errors: √(Σ_ii/N) for means and
// √((Σ_iiΣ_jj + Σ_ij²)/N) for covariances (docs/math.md#verification).
func TestEulerMaruyamaMatchesKernel(t *testing.T) {
	paths, steps := 20000, 1000
	if testing.Short() {
		paths, steps = 5000, 400
	}
	cases := []struct {
		name string
		cfg  Config
		t    float64
	}{
		{"hold3", DefaultConfig(KindHOLD), 0.5},
		{"hold2", withOrder(2), 0.5},
		{"hold4", withOrder(4), 0.5},
		{"cld", DefaultConfig(KindCLD), 0.06},
		{"vp", DefaultConfig(KindVP), 0.3},
		{"ve", DefaultConfig(KindVE), 0.5},
	}
	const q0 = 0.7
	for ci, c := range cases {
		s := mustNew(t, c.cfg)
		n := s.Blocks()
		rng := rand.New(rand.NewPCG(42, uint64(ci)))
		x := make([]float64, paths*n)
		for p := 0; p < paths; p++ {
			x[p*n] = q0
			for k := 1; k < n; k++ {
				x[p*n+k] = s.scale[k] * math.Sqrt(s.auxVar) * rng.NormFloat64()
			}
			if c.cfg.Kind == KindVE { // score_sde's VE kernel starts the data with variance σ_min²
				x[p*n] += c.cfg.SigmaMin * rng.NormFloat64()
			}
		}
		drift := make([]float64, len(x))
		times := make([]float64, paths)
		dt := c.t / float64(steps)
		for step := 0; step < steps; step++ {
			tm := float64(step) * dt
			for p := range times {
				times[p] = tm
			}
			if err := s.ForwardDrift(drift, x, times); err != nil {
				t.Fatal(err)
			}
			g := s.Diffusion(tm) * math.Sqrt(dt)
			for i := range x {
				x[i] += drift[i] * dt
			}
			for p := 0; p < paths; p++ {
				x[p*n+n-1] += g * rng.NormFloat64()
			}
		}
		k := s.Kernel(c.t)
		var mean [MaxBlocks]float64
		for p := 0; p < paths; p++ {
			for i := 0; i < n; i++ {
				mean[i] += x[p*n+i] / float64(paths)
			}
		}
		var worst float64
		N := float64(paths)
		for i := 0; i < n; i++ {
			z := (mean[i] - k.Mean.At(i, 0)*q0) / math.Sqrt(k.Sigma.At(i, i)/N)
			worst = math.Max(worst, math.Abs(z))
			for j := 0; j <= i; j++ {
				var cov float64
				for p := 0; p < paths; p++ {
					cov += (x[p*n+i] - mean[i]) * (x[p*n+j] - mean[j])
				}
				cov /= N - 1
				sii, sjj, sij := k.Sigma.At(i, i), k.Sigma.At(j, j), k.Sigma.At(i, j)
				z := (cov - sij) / math.Sqrt((sii*sjj+sij*sij)/N)
				worst = math.Max(worst, math.Abs(z))
			}
		}
		t.Logf("%s: %d paths, %d steps to t=%g: max |z| = %.2f", c.name, paths, steps, c.t, worst)
		if worst > 4 {
			t.Errorf("%s: max |z| = %.2f > 4", c.name, worst)
		}
	}
}

func withOrder(order int) Config {
	c := DefaultConfig(KindHOLD)
	c.Order = order
	return c
}
