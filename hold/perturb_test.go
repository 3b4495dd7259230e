package hold

import (
	"math"
	"math/rand/v2"

	hrng "holdgo/rng"
	"testing"
)

func normals32(n int, rng *rand.Rand) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	return v
}

// TestPerturbMatchesReference: the fused kernel against a plain per-element evaluation of
// x_t = Mean·x_0 + Chol·ε from Kernel/NoiseKernel, for every SDE, BCSM and DSM, on awkward sizes.
func TestPerturbMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range allKinds(t) {
		for _, objective := range []string{ObjectiveBCSM, ObjectiveDSM} {
			cfg := c.sde.Config()
			cfg.Objective = objective
			s := mustNew(t, cfg)
			n := s.Blocks()
			for _, shape := range [][2]int{{1, 1}, {3, 17}, {5, 2}, {300, 3}} { // 300 samples: several worker chunks
				batch, d := shape[0], shape[1]
				b := Batch{
					Data:   normals32(batch*d, rng),
					Times:  make([]float64, batch),
					Noise:  normals32(batch*n*d, rng),
					State:  make([]float32, batch*n*d),
					Target: make([]float32, batch*d),
				}
				if objective == ObjectiveDSM {
					b.Aux = normals32(batch*(n-1)*d, rng)
				}
				s.SampleTimes(b.Times, hrng.New(rng.Uint64()))
				if err := s.Perturb(b); err != nil {
					t.Fatal(err)
				}
				for bi, tm := range b.Times {
					k := s.Kernel(tm)
					if objective == ObjectiveDSM && n > 1 { // for n = 1 the objectives coincide
						k = s.NoiseKernel(tm)
					}
					for i := 0; i < d; i++ {
						x0 := make([]float64, n)
						x0[0] = float64(b.Data[bi*d+i])
						for j := 1; j < n && objective == ObjectiveDSM; j++ {
							x0[j] = s.scale[j] * math.Sqrt(s.auxVar) * float64(b.Aux[bi*(n-1)*d+(j-1)*d+i])
						}
						for r := 0; r < n; r++ {
							want := 0.0
							for j := 0; j < n; j++ {
								want += k.Mean.At(r, j)*x0[j] + k.Chol.At(r, j)*float64(b.Noise[bi*n*d+j*d+i])
							}
							got := b.State[bi*n*d+r*d+i]
							if float32(want) != got && !(math.Abs(float64(got)-want) <= 1e-7*math.Abs(want)) {
								t.Fatalf("%s %s: x_t[%d][%d][%d] = %g, want %g", c.name, objective, bi, r, i, got, want)
							}
						}
						if b.Target[bi*d+i] != -b.Noise[bi*n*d+(n-1)*d+i] {
							t.Fatalf("%s: target is not −ε_last", c.name)
						}
					}
				}
			}
		}
	}
}

// TestPerfectOutputGivesConditionalScore pins the sign convention: a network output equal to the target
// (−ε_last) turns, through ScoreFromOutput, into the exact conditional score −[Σ⁻¹(x_t − μ_t)]_n.
func TestPerfectOutputGivesConditionalScore(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, c := range allKinds(t) {
		for _, objective := range []string{ObjectiveBCSM, ObjectiveDSM} {
			cfg := c.sde.Config()
			cfg.Objective = objective
			s := mustNew(t, cfg)
			n, batch := s.Blocks(), 6
			b := Batch{
				Data:   normals32(batch, rng),
				Times:  []float64{0.05, 0.2, 0.5, 0.7, 0.9, 1},
				Noise:  normals32(batch*n, rng),
				State:  make([]float32, batch*n),
				Target: make([]float32, batch),
			}
			if objective == ObjectiveDSM {
				b.Aux = normals32(batch*(n-1), rng)
			}
			if err := s.Perturb(b); err != nil {
				t.Fatal(err)
			}
			score := make([]float64, batch)
			if err := s.ScoreFromOutput(score, b.Target, b.Times); err != nil {
				t.Fatal(err)
			}
			for bi, tm := range b.Times {
				k := s.ObjectiveKernel(tm)
				// μ_t = Mean·x_0 with the same x_0; recover x_t − μ_t = Chol·ε in float64
				r := make([]float64, n)
				cov := make([][]float64, n)
				for i := 0; i < n; i++ {
					cov[i] = make([]float64, n)
					for j := 0; j < n; j++ {
						cov[i][j] = k.Sigma.At(i, j)
						r[i] += k.Chol.At(i, j) * float64(b.Noise[bi*n+j])
					}
				}
				want := -gaussSolve(cov, r)[n-1]
				if !(math.Abs(score[bi]-want) <= 1e-6*math.Abs(want)+1e-9) {
					t.Errorf("%s %s t=%g: score from perfect output %g, conditional score %g", c.name, objective, tm, score[bi], want)
				}
			}
		}
	}
}

// TestLossGradient: value and gradient of the noise-prediction loss (sum over dimensions, mean over
// the batch) against direct evaluation and central differences.
func TestLossGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	batch, d := 3, 5
	out, target := normals32(batch*d, rng), normals32(batch*d, rng)
	grad := make([]float32, batch*d)
	loss, err := Loss(grad, out, target, batch)
	if err != nil {
		t.Fatal(err)
	}
	var want float64
	for i := range out {
		diff := float64(out[i]) - float64(target[i])
		want += diff * diff / float64(batch)
	}
	if !(math.Abs(loss-want) <= 1e-12*want) {
		t.Errorf("loss %g, want %g", loss, want)
	}
	for i := range out {
		orig := out[i]
		const h = 1.0 / 64 // exact in float32; the loss is quadratic, so central differences are exact
		out[i] = orig + h
		up, _ := Loss(nil, out, target, batch)
		out[i] = orig - h
		down, _ := Loss(nil, out, target, batch)
		out[i] = orig
		fd := (up - down) / (2 * h)
		if !(math.Abs(float64(grad[i])-fd) <= 1e-6*math.Max(1, math.Abs(fd))) {
			t.Errorf("grad[%d] = %g, finite difference %g", i, grad[i], fd)
		}
	}
	if _, err := Loss(grad, out[:4], target, batch); err == nil {
		t.Error("mismatched lengths accepted")
	}
}

func TestSampleTimesAndErrors(t *testing.T) {
	s := mustNew(t, DefaultConfig(KindHOLD))
	rng := rand.New(rand.NewPCG(1, 1))
	times := make([]float64, 10000)
	s.SampleTimes(times, hrng.New(rng.Uint64()))
	var mean float64
	for _, tm := range times {
		if tm < s.MinTime() || tm > s.Horizon() {
			t.Fatalf("time %g outside [t_min, T]", tm)
		}
		mean += tm / float64(len(times))
	}
	if want := (s.MinTime() + s.Horizon()) / 2; !(math.Abs(mean-want) <= 0.1) {
		t.Errorf("mean sampled time %g, want ≈ %g", mean, want)
	}
	b := Batch{Data: make([]float32, 2), Times: []float64{0.1, 0}, Noise: make([]float32, 6),
		State: make([]float32, 6), Target: make([]float32, 2)}
	if err := s.Perturb(b); err == nil {
		t.Error("t = 0 accepted")
	}
	b.Times[1] = 0.2
	b.State = b.State[:5]
	if err := s.Perturb(b); err == nil {
		t.Error("short state accepted")
	}
	dsm := DefaultConfig(KindHOLD)
	dsm.Objective = ObjectiveDSM
	b.State = make([]float32, 6)
	if err := mustNew(t, dsm).Perturb(b); err == nil {
		t.Error("DSM without auxiliary noise accepted")
	}
}

// BenchmarkPerturb measures the fused kernel (B = 128, d = 3072: CIFAR-10 sized) per element.
func BenchmarkPerturb(b *testing.B) {
	for _, order := range []int{3, 4} {
		s, _ := New(withOrder(order))
		rng := rand.New(rand.NewPCG(1, 2))
		batch, d, n := 128, 3072, order
		in := Batch{Data: normals32(batch*d, rng), Times: make([]float64, batch), Noise: normals32(batch*n*d, rng),
			State: make([]float32, batch*n*d), Target: make([]float32, batch*d)}
		s.SampleTimes(in.Times, hrng.New(rng.Uint64()))
		b.Run(map[int]string{3: "hold3", 4: "hold4"}[order], func(b *testing.B) {
			b.SetBytes(int64(4 * batch * d * (2*n + 2)))
			for i := 0; i < b.N; i++ {
				if err := s.Perturb(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
