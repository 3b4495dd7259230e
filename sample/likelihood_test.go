package sample

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/rng"
)

// TestOracleMatchesHold: the oracle's score equals hold.MixtureOracle's, and its VJP equals central
// finite differences (float64) of hold's score, for every SDE kind at small and large t.
func TestOracleMatchesHold(t *testing.T) {
	mix := hold.Mixture{Weights: []float64{0.5, 0.3, 0.2}, Means: [][]float64{{-0.5, 0.2}, {0.3, 0.1}, {0.6, -0.4}}, Stds: []float64{0.05, 0.1, 0.02}}
	const d = 2
	for _, kind := range []string{hold.KindHOLD, hold.KindCLD, hold.KindVP, hold.KindVE} {
		sde := newSDE(t, kind)
		n := sde.Blocks()
		ref, _ := hold.NewMixtureOracle(sde, mix)
		orc, err := hold.NewMixtureOracle(sde, mix)
		if err != nil {
			t.Fatal(err)
		}
		r := rng.New(3)
		for _, frac := range []float64{0.01, 0.1, 0.6} {
			tt := frac * sde.Horizon()
			k := sde.Kernel(tt)
			const batch = 4
			x := make([]float64, batch*n*d)
			u := make([]float64, batch*d)
			times := make([]float64, batch)
			for b := 0; b < batch; b++ {
				times[b] = tt
				c := b % 3
				for i := 0; i < d; i++ { // a point of component c at time t
					var z [hold.MaxBlocks]float64
					for j := 0; j < n; j++ {
						z[j] = r.Normal()
					}
					q0 := mix.Means[c][i] + mix.Stds[c]*r.Normal()
					for j := 0; j < n; j++ {
						v := k.Mean.At(j, 0) * q0
						for l := 0; l <= j; l++ {
							v += k.Chol.At(j, l) * z[l]
						}
						x[b*n*d+j*d+i] = v
					}
					u[b*d+i] = r.Normal()
				}
			}
			want := make([]float64, batch*d)
			got := make([]float64, batch*d)
			vjp := make([]float64, batch*n*d)
			if err := ref.Score(want, x, times); err != nil {
				t.Fatal(err)
			}
			if err := orc.ScoreVJP(got, vjp, x, u, times); err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if !(math.Abs(got[i]-want[i]) <= 1e-9*(1+math.Abs(want[i]))) {
					t.Errorf("%s t=%g: score %g, hold %g", kind, tt, got[i], want[i])
				}
			}
			// Central differences of hold's score along each state coordinate, with a step scaled to
			// the kernel's standard deviation of that block.
			for b := 0; b < batch; b++ {
				for j := 0; j < n; j++ {
					hStep := 1e-4 * math.Sqrt(k.Sigma.At(j, j))
					for i := 0; i < d; i++ {
						xp := append([]float64(nil), x[b*n*d:(b+1)*n*d]...)
						xm := append([]float64(nil), xp...)
						xp[j*d+i] += hStep
						xm[j*d+i] -= hStep
						sp, sm := make([]float64, d), make([]float64, d)
						_ = ref.Score(sp, xp, times[:1])
						_ = ref.Score(sm, xm, times[:1])
						var fd float64
						for l := 0; l < d; l++ {
							fd += u[b*d+l] * (sp[l] - sm[l]) / (2 * hStep)
						}
						g := vjp[b*n*d+j*d+i]
						if !(math.Abs(g-fd) <= 1e-5*(1+math.Abs(fd))) {
							t.Errorf("%s t=%g sample %d: VJP[%d,%d] = %g, finite differences %g", kind, tt, b, j, i, g, fd)
						}
					}
				}
			}
		}
	}
}

// TestGaussianNLL is the acceptance check: for Gaussian data and the exact score the ODE bound equals the
// exact log-density. Point by point the bound with the drawn auxiliary values (PerPointAux) must agree
// within 0.01 nats/dim; the paper's form with the entropy H has the same mean up to its larger noise.
func TestGaussianNLL(t *testing.T) {
	const d, points = 3, 48
	m := []float64{0.3, -0.2, 0.1}
	sigmas := []float64{0.4, 0.4, 0.4}
	for _, c := range []struct{ kind, gauge string }{
		{hold.KindHOLD, GaugeKernel}, {hold.KindCLD, GaugeKernel}, {hold.KindVP, GaugeKernel},
		{hold.KindHOLD, GaugeAligned}, {hold.KindCLD, GaugeAligned}, {hold.KindVP, GaugeAligned},
	} {
		kind := c.kind + " (" + c.gauge + " gauge)"
		sde := newSDE(t, c.kind)
		orc, _ := hold.NewMixtureOracle(sde, hold.Mixture{Weights: []float64{1}, Means: [][]float64{m}, Stds: sigmas[:1]})
		r := rng.New(21)
		data := make([]float64, points*d)
		exact := make([]float64, points) // −log N(q0; m, σ²I) per dimension
		for p := 0; p < points; p++ {
			for i := 0; i < d; i++ {
				z := r.Normal()
				data[p*d+i] = m[i] + sigmas[i]*z
				exact[p] += (0.5*z*z + math.Log(sigmas[i]) + 0.5*math.Log(2*math.Pi)) / d
			}
		}
		res, err := NLL(sde, orc, data, d, LikelihoodConfig{MaxBatch: 16, Workers: 2, Gauge: c.gauge}, 5)
		if err != nil {
			t.Fatal(err)
		}
		var worst, diffMean float64
		for p, v := range res.PerPointAux {
			diff := v/d - exact[p]
			worst = math.Max(worst, math.Abs(diff))
			diffMean += (res.PerPoint[p]/d - exact[p]) / points
		}
		var exactMean float64
		for _, v := range exact {
			exactMean += v / points
		}
		t.Logf("%s: exact %.4f nats/dim; bound %v (with H), %v (drawn aux); worst point %.1e; NFE %d",
			kind, exactMean, res.NatsPerDim, res.NatsPerDimAux, worst, res.NFE)
		if !(worst <= 0.01) {
			t.Errorf("%s: a point's bound is %g nats/dim from the exact log-density", kind, worst)
		}
		// The H form differs from the exact value by aux noise only; its spread per point is that noise.
		se := res.NatsPerDim.SE * math.Sqrt(2) // upper bound on the standard error of the difference
		if !(math.Abs(diffMean) <= 3*se+0.01) {
			t.Errorf("%s: the bound with H is %g nats/dim from the exact mean (SE %g)", kind, diffMean, se)
		}
		if got := res.BitsPerDim.Mean; !(math.Abs(got-res.NatsPerDim.Mean/math.Ln2) <= 1e-12) {
			t.Errorf("%s: bits/dim %g for %g nats/dim and offset 0", kind, got, res.NatsPerDim.Mean)
		}
	}
}

// TestHutchinsonUnbiased: on a 2-D mixture, where ∂S/∂x_n has off-diagonal entries, the Rademacher and
// Gaussian estimators agree with the exact trace in the mean over points (same aux draws: same seed).
func TestHutchinsonUnbiased(t *testing.T) {
	sde := newSDE(t, hold.KindCLD)
	mix := hold.Mixture{Weights: []float64{0.5, 0.5}, Means: [][]float64{{-0.4, -0.4}, {0.4, 0.4}}, Stds: []float64{0.2, 0.2}}
	orc, _ := hold.NewMixtureOracle(sde, mix)
	const d, points = 2, 200
	r := rng.New(8)
	data := make([]float64, points*d)
	for p := 0; p < points; p++ {
		c := p % 2
		for i := 0; i < d; i++ {
			data[p*d+i] = mix.Means[c][i] + 0.2*r.Normal()
		}
	}
	cfg := LikelihoodConfig{RTol: 1e-4, ATol: 1e-4, Estimator: EstimatorExact, MaxBatch: 50, Workers: 2}
	exact, err := NLL(sde, orc, data, d, cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, est := range []string{EstimatorRademacher, EstimatorGaussian} {
		cfg.Estimator = est
		res, err := NLL(sde, orc, data, d, cfg, 4)
		if err != nil {
			t.Fatal(err)
		}
		diffs := make([]float64, points)
		for p := range diffs {
			diffs[p] = (res.PerPoint[p] - exact.PerPoint[p]) / d
		}
		st := MeanSE(diffs)
		t.Logf("%s − exact trace: %v nats/dim (NFE %d vs %d)", est, st, res.NFE, exact.NFE)
		if !(math.Abs(st.Mean) <= 3*st.SE+1e-3) {
			t.Errorf("%s: mean difference %v from the exact trace", est, st)
		}
	}
}

func TestBitsPerDimAndDequantize(t *testing.T) {
	// Uniform dequantised 8-bit data has density 1/2 per dimension on [−1, 1]: ln 2 nats/dim, which must
	// read as 8 bits (256 equally likely levels).
	if got := BitsPerDim(math.Ln2, OffsetCentered8Bit); !(math.Abs(got-8) <= 1e-12) {
		t.Errorf("bits/dim of the uniform density: %g, want 8", got)
	}
	// On [0, 1] the density is 1: 0 nats → 8 bits.
	if got := BitsPerDim(0, OffsetUnit8Bit); got != 8 {
		t.Errorf("bits/dim on [0, 1]: %g, want 8", got)
	}
	if got := BitsPerDim(2*math.Ln2, 0); !(math.Abs(got-2) <= 1e-12) {
		t.Errorf("2 ln 2 nats = %g bits, want 2", got)
	}
	levels := []uint8{0, 255, 128, 7}
	dst := make([]float64, len(levels))
	r := rng.New(1)
	for range 1000 {
		if err := Dequantize(dst, levels, r); err != nil {
			t.Fatal(err)
		}
		for i, k := range levels {
			lo := 2*float64(k)/256 - 1
			if dst[i] < lo || !(dst[i] < lo+2.0/256) || dst[i] < -1 || dst[i] >= 1 {
				t.Fatalf("level %d dequantised to %g, outside [%g, %g)", k, dst[i], lo, lo+2.0/256)
			}
		}
	}
	if err := Dequantize(dst[:1], levels, r); err == nil {
		t.Error("length mismatch accepted")
	}
}

// TestAuxEntropyMatchesAuxVariance guards the auxiliary variance NLL draws from (α·v_k, mirroring hold):
// its Gaussian entropy must equal hold.SDE.AuxEntropy.
func TestAuxEntropyMatchesAuxVariance(t *testing.T) {
	for _, kind := range []string{hold.KindHOLD, hold.KindCLD, hold.KindVP} {
		sde := newSDE(t, kind)
		var h float64
		for k := 1; k < sde.Blocks(); k++ {
			h += 0.5 * (1 + math.Log(2*math.Pi*sde.Config().Alpha*sde.PriorVariance(k)))
		}
		if !(math.Abs(h-sde.AuxEntropy()) <= 1e-12) {
			t.Errorf("%s: entropy of the drawn aux %g, hold's AuxEntropy %g", kind, h, sde.AuxEntropy())
		}
	}
	// HOLD: d/2·(1 + log 2πα/L) per auxiliary block (hold-paper §5).
	sde := newSDE(t, hold.KindHOLD)
	cfg := sde.Config()
	if want := 2 * 0.5 * (1 + math.Log(2*math.Pi*cfg.Alpha/cfg.L)); !(math.Abs(sde.AuxEntropy()-want) <= 1e-12) {
		t.Errorf("HOLD aux entropy %g, want %g", sde.AuxEntropy(), want)
	}
}
