package cuda

import (
	"fmt"
	"slices"
	"testing"

	"holdgo/hold"
	"holdgo/hold/holdops"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// The kernel suite: the backend table (tensor/optest, ggml's test-backend-ops) on the device, and
// what the table cannot express — chunked convolutions, the group-norm gradients, the Philox
// streams, the training step's and the samplers' fused kernels against their host definitions —
// against Go references by normalised MSE. It runs
// on any Device: the host shim in CI (shim_test.go, -tags cudashim) and a GPU where there is one
// (gpu_test.go, -tags cuda).

const (
	tolElementwise = 1e-10 // element-wise maps, data movement, fused HOLD kernels
	tolReduce      = 1e-6  // reductions, softmax, group norm, GEMM, filters
)

type suite struct {
	t   *testing.T
	dev *Device
	rng *tensor.RNG
}

func (s *suite) randn(shape ...int) *tensor.Tensor { return tensor.RandN(s.rng, shape...) }

func (s *suite) randu(lo, hi float64, shape ...int) *tensor.Tensor {
	return tensor.RandU(s.rng, lo, hi, shape...)
}

func (s *suite) to(dev tensor.Device, h *tensor.Tensor) *tensor.Tensor {
	s.t.Helper()
	out, err := h.ToDevice(dev)
	if err != nil {
		s.t.Fatal(err)
	}
	return out
}

func (s *suite) host(x *tensor.Tensor) []float32 {
	s.t.Helper()
	h, err := x.ToHost()
	if err != nil {
		s.t.Fatal(err)
	}
	return h.Data()
}

func (s *suite) check(name string, got, want []float32, tol float64) {
	s.t.Helper()
	if e := nmse(got, want); !(e <= tol) {
		n := min(len(got), 6)
		s.t.Errorf("%s: normalised MSE %.3g > %.0g\n got  %v\n want %v", name, e, tol, got[:n], want[:min(n, len(want))])
	}
}

// compare runs f on the reference device and on the device under test with the same host inputs
// and compares the results.
func (s *suite) compare(name string, tol float64, f func(in ...*tensor.Tensor) *tensor.Tensor, in ...*tensor.Tensor) {
	s.t.Helper()
	ref := make([]*tensor.Tensor, len(in))
	dev := make([]*tensor.Tensor, len(in))
	for i, h := range in {
		ref[i], dev[i] = s.to(tensor.Reference, h), s.to(s.dev, h)
	}
	var got *tensor.Tensor
	func() {
		defer func() {
			if r := recover(); r != nil {
				s.t.Errorf("%s: %v", name, r)
			}
		}()
		got = f(dev...)
	}()
	if got == nil {
		return
	}
	if err := got.Err(); err != nil {
		s.t.Errorf("%s: %v", name, err)
		return
	}
	if got.Device() != tensor.Device(s.dev) {
		s.t.Errorf("%s: result on %s", name, got.Device().Name())
	}
	s.check(name, s.host(got), s.host(f(ref...)), tol)
}

// table runs the cases of the backend table (tensor/optest) of the given kinds (all when none) on
// the device under test against tensor.Reference, in strict FP32 (the element-wise maps, data movement,
// reductions and GEMMs that the suite tested with case lists of its own are the table's); the
// shim's and a GPU's own table tests (TestShimBackendTable, TestGPUBackendTable) also print the
// supported-ops matrix.
func (s *suite) table(t *testing.T, kinds ...tensor.OpKind) {
	defer func(v bool) { s.dev.StrictFP32 = v }(s.dev.StrictFP32)
	s.dev.StrictFP32 = true
	ran := 0
	for _, c := range optest.Cases() {
		if len(kinds) > 0 && !slices.Contains(kinds, c.Kind) {
			continue
		}
		ran++
		switch r := optest.Run(s.dev, c); {
		case r.Err != nil:
			t.Errorf("%s: %v", c.Name, r.Err)
		case !(r.NMSE <= tolReduce):
			t.Errorf("%s: normalised MSE %.3g > %.0g against the reference", c.Name, r.NMSE, tolReduce)
		}
	}
	if ran == 0 {
		t.Fatalf("no case of %v in the table", kinds)
	}
}

func newSuiteRNG() *tensor.RNG { return tensor.NewRNG(7) }

func runKernelSuite(t *testing.T, dev *Device) {
	s := &suite{t: t, dev: dev, rng: newSuiteRNG()}
	t.Run("op table", func(t *testing.T) { s.table(t) })
	t.Run("conv", s.conv)
	t.Run("groupnorm grad", s.groupNormGrad)
	t.Run("hold", s.hold)
	t.Run("lietrotter", s.lieTrotter)
	t.Run("random", s.random)            // train_suite_test.go
	t.Run("train step", s.trainStep)     // train_suite_test.go
	t.Run("staged batch", s.stagedBatch) // train_suite_test.go
	t.Run("time embedding", s.timeEmbed) // train_suite_test.go
}

// fused runs a device method on device copies of host inputs and returns the host values of the
// outputs (the tensors at positions outs).
func (s *suite) fused(name string, f func(in []*tensor.Tensor) error, in ...*tensor.Tensor) [][]float32 {
	s.t.Helper()
	dev := make([]*tensor.Tensor, len(in))
	for i, h := range in {
		dev[i] = s.to(s.dev, h)
	}
	if err := f(dev); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	out := make([][]float32, len(dev))
	for i, x := range dev {
		out[i] = s.host(x)
	}
	return out
}

func holdConfigs() map[string]hold.Config {
	h3, h4, cld := hold.DefaultConfig(hold.KindHOLD), hold.DefaultConfig(hold.KindHOLD), hold.DefaultConfig(hold.KindCLD)
	h4.Order = 4
	dsm := h3
	dsm.Objective = hold.ObjectiveDSM
	return map[string]hold.Config{"hold3": h3, "hold4": h4, "cld": cld, "hold3-dsm": dsm, "vp": hold.DefaultConfig(hold.KindVP)}
}

func (s *suite) hold(t *testing.T) {
	s.t = t
	for name, cfg := range holdConfigs() {
		sde, err := hold.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := sde.Blocks()
		for _, c := range [][2]int{{1, 1}, {3, 17}, {5, 1000}} {
			batch, dim := c[0], c[1]
			times := make([]float64, batch)
			for i := range times {
				times[i] = sde.MinTime() + (sde.Horizon()-sde.MinTime())*s.rng.Float64()
			}
			times[0] = sde.MinTime() // the ill-conditioned end
			q0, eps := s.randn(batch, dim), s.randn(batch, n*dim)
			var aux *tensor.Tensor
			ref := hold.Batch{Data: q0.Data(), Times: times, Noise: eps.Data(),
				State: make([]float32, batch*n*dim), Target: make([]float32, batch*dim)}
			in := []*tensor.Tensor{q0, eps, tensor.Zeros(batch, n*dim), tensor.Zeros(batch, dim)}
			if cfg.Objective == hold.ObjectiveDSM {
				aux = s.randn(batch, (n-1)*dim)
				ref.Aux = aux.Data()
				in = append(in, aux)
			}
			if err := sde.Perturb(ref); err != nil {
				t.Fatal(err)
			}
			got := s.fused("perturb", func(d []*tensor.Tensor) error {
				var da *tensor.Tensor
				if aux != nil {
					da = d[4]
				}
				coef := make([]float32, batch*tensor.PerturbCoefLen)
				for i, tt := range times {
					holdops.PutPerturbCoefficients(coef[i*tensor.PerturbCoefLen:], sde, tt)
				}
				return tensor.Err(tensor.Perturb(d[2], d[3], s.to(s.dev, tensor.FromSlice(coef, len(coef))), d[0], d[1], da, n))
			}, in...)
			s.check(fmt.Sprintf("Perturb %s %v state", name, c), got[2], ref.State, tolElementwise)
			s.check(fmt.Sprintf("Perturb %s %v target", name, c), got[3], ref.Target, tolElementwise)
		}
	}
}

func toF64(x []float32) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = float64(v)
	}
	return out
}

func toF32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func (s *suite) lieTrotter(t *testing.T) {
	s.t = t
	for name, cfg := range holdConfigs() {
		if cfg.Objective == hold.ObjectiveDSM {
			continue
		}
		sde, err := hold.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := sde.Blocks()
		tt := 0.6 * sde.Horizon()
		for _, c := range []struct {
			batch, dim int
			h, hNext   float64
			exact      bool
		}{{1, 1, 0.01, 0.01, false}, {3, 17, 0.05, 0.04, true}, {2, 1000, 0.02, 0, false}} {
			x, score := s.randn(c.batch, n*c.dim), s.randn(c.batch, c.dim)
			z1, z2 := s.randn(c.batch, n*c.dim), s.randn(c.batch, n*c.dim)
			ell := sde.Ell(tt)
			st := holdops.LieTrotter(sde, tt, c.h, c.hNext, ell, c.exact)
			z := []*tensor.Tensor{z1, z2}[:st.Halves]
			// Reference: package hold's own B and A steps in float64.
			want := toF64(x.Data())
			sc := toF64(score.Data())
			for i := range sc {
				sc[i] *= ell
			}
			bstep := sde.BStep
			if c.exact {
				bstep = sde.BStepExact
			}
			if err := bstep(want, sc, c.batch, tt, c.h); err != nil {
				t.Fatal(err)
			}
			if err := sde.ApplyAStep(want, c.batch, sde.AStep(tt-c.h/2, c.h/2), toF64(z1.Data())); err != nil {
				t.Fatal(err)
			}
			if c.hNext > 0 {
				if err := sde.ApplyAStep(want, c.batch, sde.AStep(tt-c.h, c.hNext/2), toF64(z2.Data())); err != nil {
					t.Fatal(err)
				}
			}
			for _, fused := range []bool{true, false} {
				run := func(x, score *tensor.Tensor, z []*tensor.Tensor, a tensor.BlockAffine) error {
					return tensor.Err(tensor.BlockStep(x, score, z, a))
				}
				if !fused {
					run = s.dev.LieTrotterUnfused
				}
				got := s.fused("Lie–Trotter", func(d []*tensor.Tensor) error { return run(d[0], d[1], d[2:2+len(z)], st) }, x, score, z1, z2)
				s.check(fmt.Sprintf("LieTrotter %s fused=%v %+v", name, fused, c), got[0], toF32(want), tolElementwise)
			}
		}
	}
}

// imageOps checks softmax, group norm and FIR resampling through the tensor API against
// tensor.Reference.
// conv checks Conv2d and its gradients against tensor.Reference on awkward shapes (stride 1 and 2,
// padding, 1×1, odd sizes, batch 1 and 3), with the default chunk bound (one chunk) and with a
// bound so small that every sample is a chunk of its own, and with a bound of two samples.
func (s *suite) conv(t *testing.T) {
	s.t = t
	defer func(b int) { s.dev.ConvChunkBytes = b }(s.dev.ConvChunkBytes)
	cases := []struct{ n, c, h, w, o, k, stride, pad int }{
		{1, 1, 1, 1, 1, 1, 1, 0}, {3, 5, 7, 9, 4, 3, 1, 1}, {3, 3, 8, 8, 6, 3, 2, 1}, {1, 4, 9, 7, 5, 1, 1, 0},
		{3, 6, 5, 5, 2, 1, 2, 0}, {3, 2, 9, 11, 3, 3, 2, 0}, {1, 3, 4, 4, 2, 4, 1, 2}, {3, 7, 6, 6, 5, 1, 1, 1},
	}
	for _, chunk := range []int{0, 4, -2} {
		for _, c := range cases {
			oh, ow := tensor.ConvOutSize(c.h, c.k, c.stride, c.pad), tensor.ConvOutSize(c.w, c.k, c.stride, c.pad)
			s.dev.ConvChunkBytes = chunk
			if chunk < 0 { // room for exactly two samples' columns
				s.dev.ConvChunkBytes = 2 * 4 * c.c * c.k * c.k * oh * ow
			}
			name := fmt.Sprintf("%+v chunk %d", c, s.dev.ConvChunkBytes)
			st, pd := c.stride, c.pad
			x, w, bias := s.randn(c.n, c.c, c.h, c.w), s.randn(c.o, c.c, c.k, c.k), s.randn(c.o)
			dy := s.randn(c.n, c.o, oh, ow)
			s.compare("Conv2d "+name, tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Conv2d(nil, in[0], in[1], nil, st, pd)
			}, x, w)
			s.compare("Conv2d bias "+name, tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Conv2d(nil, in[0], in[1], in[2], st, pd)
			}, x, w, bias)
			for _, beta := range []float32{0, 0.5} {
				s.compare(fmt.Sprintf("Conv2dGradInput β=%g %s", beta, name), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
					return tensor.Conv2dGradInput(in[2], in[0], in[1], st, pd, beta)
				}, dy, w, s.randn(x.Shape()...))
				s.compare(fmt.Sprintf("Conv2dGradWeight β=%g %s", beta, name), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
					return tensor.Conv2dGradWeight(in[2], in[0], in[1], st, pd, beta)
				}, x, dy, s.randn(w.Shape()...))
			}
		}
	}
}

// groupNormGrad checks the group-norm backward ops (dx, written and accumulated, and dγ, dβ added
// into nonzero gradients) and the fused group norm + SiLU against tensor.Reference, with a mean far
// from 0 (the one-pass Welford statistics) and spatial sizes below and above a block, groups that
// fit shared memory with dy and one whose x alone does not (12·1000 floats).
func (s *suite) groupNormGrad(t *testing.T) {
	s.t = t
	all := func(dx, dgamma, dbeta *tensor.Tensor) *tensor.Tensor {
		return tensor.Concat(nil, 0, dx.Reshape(dx.Len()), dgamma, dbeta)
	}
	for _, c := range [][4]int{{1, 1, 1, 1}, {3, 6, 17, 3}, {2, 8, 300, 4}, {1, 64, 9, 32}, {3, 4, 1000, 2}, {2, 12, 1000, 1}} {
		x := s.randn(c[0], c[1], c[2])
		tensor.AddScalar(x, x, 3)
		gamma, beta, dy := s.randn(c[1]), s.randn(c[1]), s.randn(c[0], c[1], c[2])
		dx, dgamma, dbeta := s.randn(c[0], c[1], c[2]), s.randn(c[1]), s.randn(c[1])
		g := c[3]
		for _, keep := range []float32{0, 1} {
			s.compare(fmt.Sprintf("GroupNormBackward %v β=%g", c, keep), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
				return all(tensor.GroupNormBackward(in[3], in[0], in[1], in[2], in[4], in[5], g, 1e-5, keep), in[4], in[5])
			}, x, gamma, dy, dx, dgamma, dbeta)
			s.compare(fmt.Sprintf("GroupNormSiLUBackward %v β=%g", c, keep), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
				return all(tensor.GroupNormSiLUBackward(in[4], in[0], in[1], in[2], in[3], in[5], in[6], g, 1e-5, keep), in[5], in[6])
			}, x, gamma, beta, dy, dx, dgamma, dbeta)
		}
		s.compare(fmt.Sprintf("GroupNormSiLU %v", c), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.GroupNormSiLU(nil, in[0], in[1], in[2], g, 1e-5)
		}, x, gamma, beta)
	}
	// Rank 4 as NCSN++ uses it.
	s.compare("GroupNormBackward NCHW", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
		return all(tensor.GroupNormBackward(nil, in[0], in[1], in[2], in[3], in[4], 4, 1e-6, 0), in[3], in[4])
	}, s.randn(2, 16, 5, 7), s.randn(16), s.randn(2, 16, 5, 7), s.randn(16), s.randn(16))
}
