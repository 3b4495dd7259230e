package cuda

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"holdgo/hold"
	"holdgo/hold/holdops"
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/rng"
	"holdgo/tensor"
)

// The training-step families in the kernel suite (runKernelSuite): Philox streams and dropout
// bit-identical to package rng's Go twin, the device loss, gradient norm, clipped Adam and guarded
// EMA against optim and hold, and the coefficients of the staged batch against hold.SDE.Perturb.

// dropoutOffsets are the mask offsets the dropout kernel is checked at: each lane of a Philox
// block, and counters just below, at and above 2³² (mask elements 4·2³² − 6 … on).
var dropoutOffsets = []uint64{0, 1, 3, 4, 5, 1<<34 - 6, 1<<34 + 1}

func (s *suite) random(t *testing.T) {
	s.t = t
	for _, st := range []rng.Stream{{Key: 1, Step: 0, ID: rng.StreamNoise}, {Key: 0xdeadbeefcafef00d, Step: 4000000000, ID: rng.DropoutStream(3)}} {
		for _, n := range []int{0, 1, 3, 17, 1000, 4099} {
			want := make([]float32, n)
			got := tensor.New(s.dev, n)
			st.FillNormal(want)
			if err := s.dev.FillNormal(got, st); err != nil {
				t.Fatal(err)
			}
			if g := s.host(got); !slices.Equal(g, want) {
				t.Errorf("normal %+v/%d: not bit-identical to rng: %v… vs %v…", st, n, g[:min(n, 4)], want[:min(n, 4)])
			}
			st.FillUniform(want)
			if err := s.dev.FillUniform(got, st); err != nil {
				t.Fatal(err)
			}
			if g := s.host(got); !slices.Equal(g, want) {
				t.Errorf("uniform %+v/%d: not bit-identical to rng", st, n)
			}
			x := s.randn(n)
			st.Dropout(want, x.Data(), 0.3)
			xd := s.to(s.dev, x)
			if err := s.dev.Dropout(xd, xd, st, 0.3); err != nil { // in place
				t.Fatal(err)
			}
			if g := s.host(xd); !slices.Equal(g, want) {
				t.Errorf("dropout %+v/%d: not bit-identical to rng", st, n)
			}
			// A part of a longer tensor: every offset modulo 4 (the lane of a Philox block), and
			// offsets whose counters cross 2³² (the carry into the counter's high word).
			for _, first := range dropoutOffsets {
				st.DropoutFrom(want, x.Data(), 0.3, first)
				yd := tensor.New(s.dev, n)
				if err := s.dev.DropoutFrom(yd, s.to(s.dev, x), st, 0.3, first); err != nil {
					t.Fatal(err)
				}
				if g := s.host(yd); !slices.Equal(g, want) {
					t.Errorf("dropout %+v/%d from %d: not bit-identical to rng", st, n, first)
				}
			}
		}
	}
}

func (s *suite) trainStep(t *testing.T) {
	s.t = t
	for _, n := range []int{6, 999, 4099 * 3} {
		batch := 3
		out, target := s.randn(n), s.randn(n)
		wantGrad := make([]float32, n)
		wantLoss, _ := hold.Loss(wantGrad, out.Data(), target.Data(), batch)
		st := tensor.New(s.dev, tensor.StatsLen)
		grad := tensor.New(s.dev, n)
		if err := tensor.Err(tensor.ScoreLoss(grad, s.to(s.dev, out), s.to(s.dev, target), st, batch)); err != nil {
			t.Fatal(err)
		}
		s.check(fmt.Sprintf("score loss grad/%d", n), s.host(grad), wantGrad, tolElementwise)

		// Gradient norm, clipping (active for maxNorm 1, inactive for 1e9) and Adam.
		for _, maxNorm := range []float64{1, 1e9, 0} {
			params, grads := s.randn(n), s.randn(n)
			dev := make([]*tensor.Tensor, 4)
			for i, h := range []*tensor.Tensor{params, grads, tensor.Zeros(n), tensor.Zeros(n)} {
				dev[i] = s.to(s.dev, h)
			}
			// The reference: the CPU device's clipped Adam on host copies (its SIMD kernels, checked
			// against the Reference device bit for bit by tensor's TestCPUFusedMatchesReference).
			ref := optim.NewAdam(n)
			want, refV, refStats := params.Clone(), tensor.Zeros(n), tensor.Zeros(tensor.StatsLen)
			adamStep := tensor.AdamStep{Beta1: ref.Beta1, Beta2: ref.Beta2, Eps: ref.Eps, LR: 1e-3, Step: 1, MaxNorm: maxNorm}
			tensor.SumSq(refStats, grads)
			tensor.Adam(want, grads.Clone(), tensor.Zeros(n), refV, refStats, adamStep)
			_, wantNorm, _, err := tensor.ReadStats(refStats)
			if err != nil {
				t.Fatal(err)
			}
			tensor.SumSq(st, dev[1])
			tensor.Adam(dev[0], dev[1], dev[2], dev[3], st, adamStep)
			loss, norm, skipped, err := tensor.ReadStats(st)
			if err != nil {
				t.Fatal(err)
			}
			if !(math.Abs(loss-wantLoss) <= 1e-12*wantLoss) || !(math.Abs(norm-wantNorm) <= 1e-12*wantNorm) || skipped != 0 {
				t.Errorf("stats/%d: loss %.17g norm %.17g skipped %d; want %.17g %.17g 0", n, loss, norm, skipped, wantLoss, wantNorm)
			}
			s.check(fmt.Sprintf("clip %g + Adam/%d params", maxNorm, n), s.host(dev[0]), want.Data(), tolElementwise)
			s.check(fmt.Sprintf("clip %g + Adam/%d v", maxNorm, n), s.host(dev[3]), refV.Data(), tolElementwise)
			shadow := s.randn(n)
			decay := optim.NewEMA(0.9, nil).NextDecay() // the first decay, 2/11
			wantShadow := tensor.EMA(shadow.Clone(), want, refStats, decay)
			dShadow := s.to(s.dev, shadow)
			if err := tensor.Err(tensor.EMA(dShadow, dev[0], st, decay)); err != nil {
				t.Fatal(err)
			}
			s.check(fmt.Sprintf("guarded EMA/%d", n), s.host(dShadow), wantShadow.Data(), tolElementwise)
		}

		// A non-finite gradient: Adam and the EMA leave everything as it was and the step is counted.
		params, grads := s.randn(n), s.randn(n)
		grads.Data()[n/2] = float32(math.Inf(1))
		p, gr, m, v, sh := s.to(s.dev, params), s.to(s.dev, grads), tensor.New(s.dev, n), tensor.New(s.dev, n), s.to(s.dev, params)
		for range 2 {
			tensor.SumSq(st, gr)
			tensor.Adam(p, gr, m, v, st, tensor.AdamStep{Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, LR: 1e-3, Step: 1, MaxNorm: 1})
			if err := tensor.Err(tensor.EMA(sh, gr, st, 0.5)); err != nil {
				t.Fatal(err)
			}
		}
		if _, norm, skipped, _ := tensor.ReadStats(st); !math.IsInf(norm, 1) || skipped != 2 {
			t.Errorf("non-finite/%d: norm %v, skipped %d; want +Inf, 2", n, norm, skipped)
		}
		if err := tensor.ClearSkipped(st); err != nil {
			t.Fatal(err)
		}
		if _, _, skipped, _ := tensor.ReadStats(st); skipped != 0 {
			t.Errorf("non-finite count not cleared by Read: %d", skipped)
		}
		if !slices.Equal(s.host(p), params.Data()) || !slices.Equal(s.host(sh), params.Data()) || slices.ContainsFunc(s.host(m), func(x float32) bool { return x != 0 }) {
			t.Errorf("non-finite/%d: parameters, EMA or moments changed", n)
		}
	}
}

func (s *suite) stagedBatch(t *testing.T) {
	s.t = t
	for name, cfg := range holdConfigs() {
		sde, err := hold.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := sde.Blocks()
		for _, dim := range []int{1, 2, 37} {
			batch := 5
			b := hold.Batch{Data: s.randn(batch, dim).Data(), Times: make([]float64, batch), Noise: s.randn(batch, n*dim).Data(),
				State: make([]float32, batch*n*dim), Target: make([]float32, batch*dim)}
			for i := range b.Times {
				b.Times[i] = 1e-3 + float64(i)/float64(batch)
			}
			var aux *tensor.Tensor
			if cfg.Objective == hold.ObjectiveDSM && n > 1 {
				b.Aux = s.randn(batch, (n-1)*dim).Data()
				aux = s.to(s.dev, tensor.FromSlice(b.Aux, batch, (n-1)*dim))
			}
			if err := sde.Perturb(b); err != nil {
				t.Fatal(err)
			}
			// The coefficients as train's staged batch carries them: one tensor, uploaded once.
			coef := make([]float32, batch*tensor.PerturbCoefLen)
			for i, tt := range b.Times {
				holdops.PutPerturbCoefficients(coef[i*tensor.PerturbCoefLen:], sde, tt)
			}
			x, target := tensor.New(s.dev, batch, n*dim), tensor.New(s.dev, batch, dim)
			tensor.Perturb(x, target, s.to(s.dev, tensor.FromSlice(coef, len(coef))), s.to(s.dev, tensor.FromSlice(b.Data, batch, dim)),
				s.to(s.dev, tensor.FromSlice(b.Noise, batch, n*dim)), aux, n)
			if err := tensor.Err(x, target); err != nil {
				t.Fatal(err)
			}
			s.check(fmt.Sprintf("staged perturb %s/%d state", name, dim), s.host(x), b.State, tolElementwise)
			s.check(fmt.Sprintf("staged perturb %s/%d target", name, dim), s.host(target), b.Target, tolElementwise)
		}
	}
}

func (s *suite) timeEmbed(t *testing.T) {
	s.t = t
	times := s.randu(1e-3, 1, 7).Data()
	w := s.randn(5)
	for i := range w.Data() {
		w.Data()[i] *= 16 // NCSN++'s Fourier scale
	}
	got := tensor.New(s.dev, 7, 10)
	if err := s.dev.FourierEmbedding(got, s.to(s.dev, tensor.FromSlice(times, 7)), s.to(s.dev, w)); err != nil {
		t.Fatal(err)
	}
	s.check("Fourier embedding", s.host(got), layers.FourierEmbedding(times, w.Data()).Data(), tolElementwise)
	got = tensor.New(s.dev, 7, 12)
	if err := s.dev.PositionalEmbedding(got, s.to(s.dev, tensor.FromSlice(times, 7)), 12); err != nil {
		t.Fatal(err)
	}
	s.check("positional embedding", s.host(got), layers.PositionalEmbedding(times, 12).Data(), tolElementwise)
}
