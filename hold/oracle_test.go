package hold

import (
	"math"
	"math/rand/v2"
	"testing"

	"holdgo/rng"
)

// allKinds returns one SDE of every instance with test times spread over its range.
func allKinds(t *testing.T) []struct {
	name  string
	sde   *SDE
	times []float64
} {
	out := []struct {
		name  string
		sde   *SDE
		times []float64
	}{}
	add := func(name string, cfg Config, times ...float64) {
		out = append(out, struct {
			name  string
			sde   *SDE
			times []float64
		}{name, mustNew(t, cfg), times})
	}
	add("hold3", DefaultConfig(KindHOLD), 1e-3, 0.05, 0.5, 2, 7)
	add("hold2", withOrder(2), 1e-3, 0.05, 0.5, 2, 7)
	add("hold4", withOrder(4), 1e-3, 0.05, 0.5, 2, 7)
	add("cld", DefaultConfig(KindCLD), 1e-4, 0.01, 0.1, 1)
	add("vp", DefaultConfig(KindVP), 1e-3, 0.05, 0.3, 1)
	add("ve", DefaultConfig(KindVE), 1e-3, 0.1, 0.5, 1)
	return out
}

// gaussSolve solves A·x = b by Gaussian elimination with partial pivoting (an independent reference
// for the oracle's Cholesky rank-one updates).
func gaussSolve(a [][]float64, b []float64) []float64 {
	n := len(b)
	m := make([][]float64, n)
	for i := range m {
		m[i] = append(append([]float64(nil), a[i]...), b[i])
	}
	for c := 0; c < n; c++ {
		p := c
		for r := c + 1; r < n; r++ {
			if !(math.Abs(m[r][c]) <= math.Abs(m[p][c])) {
				p = r
			}
		}
		m[c], m[p] = m[p], m[c]
		for r := c + 1; r < n; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k <= n; k++ {
				m[r][k] -= f * m[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := m[r][n]
		for k := r + 1; k < n; k++ {
			s -= m[r][k] * x[k]
		}
		x[r] = s / m[r][r]
	}
	return x
}

// sampleMarginal draws states from p_t of the mixture (q0 from the mixture, x = a·q0 + L_t ε).
func sampleMarginal(s *SDE, mix Mixture, tm float64, batch int, rng *rand.Rand) []float64 {
	n, d := s.Blocks(), mix.Dim()
	k := s.Kernel(tm)
	x := make([]float64, batch*n*d)
	for b := 0; b < batch; b++ {
		c := 0
		for u, acc := rng.Float64(), 0.0; c < len(mix.Weights)-1; c++ {
			if acc += mix.Weights[c]; u < acc {
				break
			}
		}
		for i := 0; i < d; i++ {
			q0 := mix.Means[c][i] + mix.Stds[c]*rng.NormFloat64()
			var eps [MaxBlocks]float64
			for j := 0; j < n; j++ {
				eps[j] = rng.NormFloat64()
			}
			for r := 0; r < n; r++ {
				v := k.Mean.At(r, 0) * q0
				for j := 0; j <= r; j++ {
					v += k.Chol.At(r, j) * eps[j]
				}
				x[b*n*d+r*d+i] = v
			}
		}
	}
	return x
}

// TestOracleSingleGaussian: for q0 ~ N(m, σ²I) the oracle equals the analytic Gaussian score
// −C⁻¹(x − a·m), C = Σ_t + σ²aaᵀ, here formed explicitly and solved by Gaussian elimination; for VP also
// against the closed form −(x − e^{−B/2}m)/(e^{−B}σ² + 1 − e^{−B}).
func TestOracleSingleGaussian(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	mix := Mixture{Weights: []float64{1}, Means: [][]float64{{0.3, -0.5}}, Stds: []float64{0.2}}
	var worst float64
	for _, c := range allKinds(t) {
		o, err := NewMixtureOracle(c.sde, mix)
		if err != nil {
			t.Fatal(err)
		}
		n, d := c.sde.Blocks(), 2
		for _, tm := range c.times {
			const batch = 8
			x := sampleMarginal(c.sde, mix, tm, batch, rng)
			times := make([]float64, batch)
			for i := range times {
				times[i] = tm
			}
			full := make([]float64, len(x))
			last := make([]float64, batch*d)
			if err := o.FullScore(full, x, times); err != nil {
				t.Fatal(err)
			}
			if err := o.Score(last, x, times); err != nil {
				t.Fatal(err)
			}
			k := c.sde.Kernel(tm)
			cov := make([][]float64, n)
			for i := range cov {
				cov[i] = make([]float64, n)
				for j := range cov[i] {
					cov[i][j] = k.Sigma.At(i, j) + 0.04*k.Mean.At(i, 0)*k.Mean.At(j, 0)
				}
			}
			for b := 0; b < batch; b++ {
				for i := 0; i < d; i++ {
					r := make([]float64, n)
					for j := range r {
						r[j] = x[b*n*d+j*d+i] - k.Mean.At(j, 0)*mix.Means[0][i]
					}
					want := gaussSolve(cov, r)
					var size float64 // natural size of the score vector at this point
					for j := range want {
						want[j] = -want[j]
						size = math.Max(size, math.Abs(want[j]))
					}
					for j := range want {
						worst = math.Max(worst, relErr(full[b*n*d+j*d+i], want[j], size))
					}
					worst = math.Max(worst, relErr(last[b*d+i], want[n-1], size))
					if c.name == "vp" {
						B := 0.1*tm + 0.5*19.9*tm*tm
						m := math.Exp(-B / 2)
						v := m*m*0.04 - math.Expm1(-B)
						want := -(x[b*d+i] - m*mix.Means[0][i]) / v
						worst = math.Max(worst, relErr(last[b*d+i], want, 0))
					}
				}
			}
		}
	}
	t.Logf("single Gaussian: worst relative deviation from the analytic score %.2e", worst)
	if !(worst <= 1e-8) {
		t.Errorf("worst deviation %.3e", worst)
	}
}

// TestOracleMixtureFiniteDifferences: the oracle's score is the gradient of its closed-form
// log-density (central differences), for the paper's 1-D mixture and a 2-D two-component one.
func TestOracleMixtureFiniteDifferences(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	mixtures := []Mixture{
		PaperMixture(),
		{Weights: []float64{0.3, 0.7}, Means: [][]float64{{-0.5, 0.2}, {0.4, 0.6}}, Stds: []float64{0.05, 0.1}},
	}
	var worst float64
	for _, mix := range mixtures {
		for _, c := range allKinds(t) {
			o, err := NewMixtureOracle(c.sde, mix)
			if err != nil {
				t.Fatal(err)
			}
			n, d := c.sde.Blocks(), mix.Dim()
			for _, tm := range c.times {
				const batch = 4
				x := sampleMarginal(c.sde, mix, tm, batch, rng)
				times := []float64{tm, tm, tm, tm}
				full := make([]float64, len(x))
				if err := o.FullScore(full, x, times); err != nil {
					t.Fatal(err)
				}
				k := c.sde.Kernel(tm)
				one := make([]float64, 1)
				for b := 0; b < batch; b++ {
					row := x[b*n*d : (b+1)*n*d]
					for j := 0; j < n; j++ {
						// step relative to the smallest scale of p_t along this block
						std := k.Chol.At(j, j)
						h := 1e-4 * std
						for i := 0; i < d; i++ {
							idx := j*d + i
							orig := row[idx]
							row[idx] = orig + h
							_ = o.LogDensity(one, row, times[:1])
							up := one[0]
							row[idx] = orig - h
							_ = o.LogDensity(one, row, times[:1])
							down := one[0]
							row[idx] = orig
							fd := (up - down) / (2 * h)
							got := full[b*n*d+idx]
							worst = math.Max(worst, math.Abs(got-fd)/(math.Abs(fd)+1/std))
						}
					}
				}
			}
		}
	}
	t.Logf("mixtures: worst |score − finite difference| = %.2e (relative to |score| + 1/std)", worst)
	if !(worst <= 1e-5) {
		t.Errorf("worst deviation %.3e", worst)
	}
}

func TestOracleErrors(t *testing.T) {
	s := mustNew(t, DefaultConfig(KindHOLD))
	if _, err := NewMixtureOracle(s, Mixture{Weights: []float64{0.5}, Means: [][]float64{{0}}, Stds: []float64{1}}); err == nil {
		t.Error("weights not summing to 1 accepted")
	}
	o, err := NewMixtureOracle(s, PaperMixture())
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Score(make([]float64, 2), make([]float64, 5), []float64{0.1, 0.2}); err == nil {
		t.Error("wrong state length accepted")
	}
	if err := o.Score(make([]float64, 1), make([]float64, 3), []float64{0}); err == nil {
		t.Error("t = 0 accepted")
	}
}

// TestPointMassPath: for the empirical distribution of a finite point set (every σ_k = 0) the fast
// point-mass path (one product of the batch with the points) gives the general path's score, full
// score, log-density and x̂₀ (rank-one updated factors per component), for HOLD-3, CLD and VP.
func TestPointMassPath(t *testing.T) {
	const d, k, batch = 5, 7, 4
	r := rng.New(11)
	mix := Mixture{Weights: make([]float64, k), Means: make([][]float64, k), Stds: make([]float64, k)}
	for c := range k {
		mix.Weights[c] = 1.0 / k
		mix.Means[c] = make([]float64, d)
		for i := range d {
			mix.Means[c][i] = 0.5 * r.Normal()
		}
	}
	for _, kind := range []string{KindHOLD, KindCLD, KindVP} {
		s, err := New(DefaultConfig(kind))
		if err != nil {
			t.Fatal(err)
		}
		fast, _ := NewMixtureOracle(s, mix)
		slow, _ := NewMixtureOracle(s, mix)
		slow.generic = true
		if !fast.points {
			t.Fatal("point-mass mixture not detected")
		}
		n := s.Blocks()
		for _, frac := range []float64{1e-3, 0.05, 0.5} {
			tt := frac * s.Horizon()
			x := make([]float64, batch*n*d)
			times := make([]float64, batch)
			for b := range times {
				times[b] = tt
			}
			for i := range x {
				x[i] = 0.3 * r.Normal()
			}
			for name, pair := range map[string][2][]float64{
				"full": {make([]float64, len(x)), make([]float64, len(x))}, "last": {make([]float64, batch*d), make([]float64, batch*d)},
				"logp": {make([]float64, batch), make([]float64, batch)}, "x0": {make([]float64, batch*d), make([]float64, batch*d)},
			} {
				for j, o := range []*MixtureOracle{fast, slow} {
					var err error
					switch name {
					case "full":
						err = o.FullScore(pair[j], x, times)
					case "last":
						err = o.Score(pair[j], x, times)
					case "logp":
						err = o.LogDensity(pair[j], x, times)
					case "x0":
						err = o.PredictX0(pair[j], x, times)
					}
					if err != nil {
						t.Fatal(err)
					}
				}
				for i := range pair[0] {
					if e := math.Abs(pair[0][i] - pair[1][i]); !(e <= 1e-9*math.Max(1, math.Abs(pair[1][i]))) {
						t.Errorf("%s t=%g %s[%d]: point-mass path %.12g, general %.12g", kind, tt, name, i, pair[0][i], pair[1][i])
					}
				}
			}
		}
	}
}
