package cuda

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"holdgo/hold"
	"holdgo/hold/holdops"
	"holdgo/rng"
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
	// tolConv: the convolutions, whose only difference from the float64 reference is the order
	// of FP32 sums of at most a few hundred products (NMSE ≈ 1e-14); a 0.1 % error in one
	// epilogue term (the bias) leaves ≈ 1e-7.
	tolConv = 1e-10
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
// convPath is one way the device can run a convolution: the im2col path with a chunk bound, or
// the implicit-GEMM kernels with a precision, tile and number of weight-gradient splits.
type convPath struct {
	name         string
	im2col       bool
	chunk        int  // im2col: 0 default, > 0 bytes, < 0 room for exactly two samples' columns
	tf32, bf16   bool // the tensor-core kernels, emulated on the shim
	tile, splits int
}

var convPaths = []convPath{
	{name: "im2col", im2col: true}, {name: "im2col chunk 4", im2col: true, chunk: 4},
	{name: "im2col 2 samples", im2col: true, chunk: -2},
	{name: "implicit f32"}, {name: "implicit f32 tile 64 splits 3", tile: 64, splits: 3},
	{name: "implicit f32 tile 128 splits 2", tile: 128, splits: 2},
	{name: "implicit tf32 tile 64", tf32: true, tile: 64, splits: 1},
	{name: "implicit tf32 tile 128 splits 3", tf32: true, tile: 128, splits: 3},
	{name: "implicit bf16 tile 64", bf16: true, tile: 64, splits: 1},
	{name: "implicit bf16 tile 128 splits 3", bf16: true, tile: 128, splits: 3},
}

// round is the rounding of p's tensor-core inputs (tf32 or bf16), nil on an FP32 path.
func (p convPath) round() func(float32) float32 {
	switch {
	case p.tf32:
		return tf32
	case p.bf16:
		return bf16
	}
	return nil
}

// set configures the device for p and returns a function that restores it.
func (p convPath) set(d *Device, c convCase) func() {
	old := *d
	d.Im2colConv, d.TF32Convs, d.StrictFP32, d.ConvTile, d.ConvSplits = p.im2col, p.tf32, !p.tf32 && !p.bf16, p.tile, p.splits
	d.BF16 = p.bf16
	d.ConvChunkBytes = p.chunk
	if p.chunk < 0 {
		oh, ow := tensor.ConvOutSize(c.h, c.k, c.stride, c.pad), tensor.ConvOutSize(c.w, c.k, c.stride, c.pad)
		d.ConvChunkBytes = 2 * 4 * c.c * c.k * c.k * oh * ow
	}
	return func() {
		d.Im2colConv, d.TF32Convs, d.StrictFP32, d.ConvTile, d.ConvSplits = old.Im2colConv, old.TF32Convs, old.StrictFP32, old.ConvTile, old.ConvSplits
		d.BF16, d.ConvChunkBytes = old.BF16, old.ConvChunkBytes
	}
}

type convCase struct{ n, c, h, w, o, k, stride, pad int }

// convCases are awkward shapes: stride 1 and 2, padding wider than the kernel's half, 1×1 to
// 33×33 images, odd channel counts, batch 1 and 3, more output channels than a 64-row tile.
var convCases = []convCase{
	{1, 1, 1, 1, 1, 1, 1, 0}, {3, 5, 7, 9, 4, 3, 1, 1}, {3, 3, 8, 8, 6, 3, 2, 1}, {1, 4, 9, 7, 5, 1, 1, 0},
	{3, 6, 5, 5, 2, 1, 2, 0}, {3, 2, 9, 11, 3, 3, 2, 0}, {1, 3, 4, 4, 2, 4, 1, 2}, {3, 7, 6, 6, 5, 1, 1, 1},
	{1, 3, 33, 33, 5, 3, 2, 1}, {2, 67, 5, 3, 131, 3, 1, 1},
}

// conv checks Conv2d (with and without a per-channel and a per-sample bias) and its gradients
// (β = 0 and 0.5) against tensor.Reference on every path of convPaths. A TF32 or BF16 path gets
// inputs already rounded to its format (tf32, bf16, written from the definition), so that the only
// difference from the float64 reference left is the order of the FP32 sums: a fragment or tiling
// error of the tensor-core kernels, which moves whole products, fails the same tolerance as the
// FP32 paths.
func (s *suite) conv(t *testing.T) {
	s.t = t
	for _, path := range convPaths {
		for _, c := range convCases {
			restore := path.set(s.dev, c)
			name := fmt.Sprintf("%+v %s", c, path.name)
			oh, ow := tensor.ConvOutSize(c.h, c.k, c.stride, c.pad), tensor.ConvOutSize(c.w, c.k, c.stride, c.pad)
			st, pd := c.stride, c.pad
			in := func(shape ...int) *tensor.Tensor {
				x := s.randn(shape...)
				if r := path.round(); r != nil {
					for i, v := range x.Data() {
						x.Data()[i] = r(v)
					}
				}
				return x
			}
			x, w, bias, bias2 := in(c.n, c.c, c.h, c.w), in(c.o, c.c, c.k, c.k), s.randn(c.o), s.randn(c.n, c.o)
			dy := in(c.n, c.o, oh, ow)
			s.compare("Conv2d "+name, tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Conv2d(nil, in[0], in[1], nil, st, pd)
			}, x, w)
			s.compare("Conv2d bias "+name, tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Conv2d(nil, in[0], in[1], in[2], st, pd)
			}, x, w, bias)
			s.compare("Conv2d per-sample bias "+name, tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Conv2d(nil, in[0], in[1], in[2], st, pd)
			}, x, w, bias2)
			s.compare("Conv2dTwoBias "+name, tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Conv2dTwoBias(nil, in[0], in[1], in[2], in[3], st, pd)
			}, x, w, bias, bias2)
			s.compare("Conv2dResidual "+name, tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Conv2dResidual(nil, in[0], in[1], in[2], in[3], 0.70710677, st, pd)
			}, x, w, bias, s.randn(dy.Shape()...))
			for _, beta := range []float32{0, 0.5} {
				s.compare(fmt.Sprintf("Conv2dGradInput β=%g %s", beta, name), tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
					return tensor.Conv2dGradInput(in[2], in[0], in[1], st, pd, beta)
				}, dy, w, s.randn(x.Shape()...))
				s.compare(fmt.Sprintf("Conv2dGradWeight β=%g %s", beta, name), tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
					return tensor.Conv2dGradWeight(in[2], in[0], in[1], st, pd, beta)
				}, x, dy, s.randn(w.Shape()...))
				// the per-channel bias gradient from the weight gradient's pass: dw, and db added into
				s.compare(fmt.Sprintf("Conv2dGradWeightBias dw β=%g %s", beta, name), tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
					return tensor.Conv2dGradWeightBias(in[2], in[3], in[0], in[1], st, pd, beta)
				}, x, dy, s.randn(w.Shape()...), s.randn(c.o))
				s.compare(fmt.Sprintf("Conv2dGradWeightBias db β=%g %s", beta, name), tolConv, func(in ...*tensor.Tensor) *tensor.Tensor {
					tensor.Conv2dGradWeightBias(in[2], in[3], in[0], in[1], st, pd, beta)
					return in[3]
				}, x, dy, s.randn(w.Shape()...), s.randn(c.o))
			}
			restore()
		}
		if path.round() != nil {
			s.convRounding(path)
		}
	}
	for _, m := range mmaShapes {
		s.warpMMA(t, m)
	}
}

// convRounding checks that a TF32 path rounds its operands as cvt.rna does (to nearest, ties away
// from zero) and a BF16 path as cvt.rn does (ties to even): the device gets unrounded inputs, half
// of them exact ties, the reference the same inputs rounded by tf32 or bf16, and the results must
// agree to the FP32 sums' order (truncating instead of rounding, not rounding, or breaking ties the
// other way leaves an NMSE of 1e-8 or more).
func (s *suite) convRounding(path convPath) {
	c := convCase{3, 5, 7, 9, 4, 3, 2, 1}
	defer path.set(s.dev, c)()
	round, bits := path.round(), 11
	if path.bf16 {
		bits = 8
	}
	oh, ow := tensor.ConvOutSize(c.h, c.k, c.stride, c.pad), tensor.ConvOutSize(c.w, c.k, c.stride, c.pad)
	ties := func(t *tensor.Tensor) *tensor.Tensor { // every other value halfway between two of the format
		for i, v := range t.Data() {
			if i%2 == 0 {
				r := round(v)
				_, e := math.Frexp(float64(r))
				t.Data()[i] = r + float32(math.Copysign(math.Ldexp(0.5, e-bits), float64(r)))
			}
		}
		return t
	}
	x, w, dy := ties(s.randn(c.n, c.c, c.h, c.w)), ties(s.randn(c.o, c.c, c.k, c.k)), ties(s.randn(c.n, c.o, oh, ow))
	rounded := func(t *tensor.Tensor) *tensor.Tensor {
		r := t.Clone()
		for i, v := range r.Data() {
			r.Data()[i] = round(v)
		}
		return s.to(tensor.Reference, r)
	}
	for _, p := range []struct {
		name string
		f    func(a, b *tensor.Tensor) *tensor.Tensor
		a, b *tensor.Tensor
	}{
		{"Conv2d", func(a, b *tensor.Tensor) *tensor.Tensor { return tensor.Conv2d(nil, a, b, nil, c.stride, c.pad) }, x, w},
		{"Conv2dGradInput", func(a, b *tensor.Tensor) *tensor.Tensor {
			return tensor.Conv2dGradInput(tensor.New(a.Device(), x.Shape()...), a, b, c.stride, c.pad, 0)
		}, dy, w},
		{"Conv2dGradWeight", func(a, b *tensor.Tensor) *tensor.Tensor {
			return tensor.Conv2dGradWeight(tensor.New(a.Device(), w.Shape()...), a, b, c.stride, c.pad, 0)
		}, x, dy},
	} {
		got := p.f(s.to(s.dev, p.a), s.to(s.dev, p.b))
		want := p.f(rounded(p.a), rounded(p.b))
		s.check(fmt.Sprintf("%s rounds its inputs %s", p.name, path.name), s.host(got), s.host(want), 1e-11)
	}
}

// tf32 rounds x to TF32 as cvt.rna.tf32.f32 does: the nearest value with 11 significant bits, ties
// away from zero (math.Round), from the definition through Frexp rather than the kernels' bit
// trick. (Subnormal inputs, which the tests do not draw, would differ.)
func tf32(x float32) float32 {
	f := float64(x)
	if f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return x
	}
	m, e := math.Frexp(f) // f = m·2^e, 0.5 ≤ |m| < 1
	return float32(math.Ldexp(math.Round(m*2048), e-11))
}

// bf16 rounds x to BF16 as cvt.rn.bf16.f32 does: the nearest value with 8 significant bits, ties
// to even (math.RoundToEven), from the definition through Frexp.
func bf16(x float32) float32 {
	f := float64(x)
	if f == 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return x
	}
	m, e := math.Frexp(f)
	return float32(math.Ldexp(math.RoundToEven(m*256), e-8))
}

// mmaShape is one warp-level tensor-core product of warp.cuh and its fragment layout, from the PTX
// ISA's figures ("Matrix fragments for mma.m16n8k8" with TF32 inputs, "for mma.m16n8k16 with
// floating point type" with BF16), with g = lane/4 and q = lane mod 4: lane l's value i of A holds
// A(a(l, i)) (row, k), of B holds B(b(l, i)) (k, n), and of C and D (4 values) C(mmaC(l, i)). A
// BF16 register holds two values, value i in half i mod 2 of register i/2.
type mmaShape struct {
	name   string
	k      int // the inner dimension
	na, nb int // values of A and B per lane
	a, b   func(l, i int) (int, int)
	round  func(float32) float32
	launch func(d *Device, a, b, dd uintptr) error
}

var mmaShapes = []mmaShape{
	{name: "hg_mma_tf32 (m16n8k8)", k: 8, na: 4, nb: 2,
		a:     func(l, i int) (int, int) { return l/4 + 8*(i%2), l%4 + 4*(i/2) },
		b:     func(l, i int) (int, int) { return l%4 + 4*i, l / 4 },
		round: tf32, launch: func(d *Device, a, b, dd uintptr) error { return d.hgWarpMmaTf32([3]int{1, 1, 1}, a, b, dd) }},
	{name: "hg_mma_bf16 (m16n8k16)", k: 16, na: 8, nb: 4,
		a:     func(l, i int) (int, int) { return l/4 + 8*((i/2)%2), 2*(l%4) + i%2 + 8*(i/4) },
		b:     func(l, i int) (int, int) { return 2*(l%4) + i%2 + 8*(i/2), l / 4 },
		round: bf16, launch: func(d *Device, a, b, dd uintptr) error { return d.hgWarpMmaBf16([3]int{1, 1, 1}, a, b, dd) }},
}

func mmaC(l, i int) (row, col int) { return l/4 + 8*(i/2), 2*(l%4) + i%2 }

// warpMMA checks one warp-level product of the warp layer (kernels/warp.cuh) through its test
// kernel (hg_warp_mma_tf32, hg_warp_mma_bf16): each of a block's 8 warps gets its own A (16×k),
// B (k×8) and C (16×8), scattered into the lanes' registers by the layout of m, and D must equal
// A·B + C in float64 with A and B rounded to m's format. On the shim this tests the emulation
// against the PTX ISA's layout; on a GPU, the same launch tests the layout table against the
// tensor cores.
func (s *suite) warpMMA(t *testing.T, m mmaShape) {
	const warps = blockSize / 32
	a, b, c := s.randn(warps, 32, m.na), s.randn(warps, 32, m.nb), s.randn(warps, 32, 4)
	p, err := s.dev.ptrs(s.to(s.dev, a), s.to(s.dev, b), s.to(s.dev, c))
	if err != nil {
		t.Fatal(err)
	}
	dd := s.to(s.dev, c)
	pd, err := s.dev.ptrOf(dd)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.launch(s.dev, p[0], p[1], pd); err != nil {
		t.Fatal(err)
	}
	got := s.host(dd)
	for w := range warps {
		A := make([][16]float64, 16)
		B := make([][8]float64, m.k)
		var C [16][8]float64
		for l := range 32 {
			for i := range m.na {
				r, k := m.a(l, i)
				A[r][k] = float64(m.round(a.Data()[(w*32+l)*m.na+i]))
			}
			for i := range m.nb {
				k, n := m.b(l, i)
				B[k][n] = float64(m.round(b.Data()[(w*32+l)*m.nb+i]))
			}
			for i := range 4 {
				r, n := mmaC(l, i)
				C[r][n] = float64(c.Data()[(w*32+l)*4+i])
			}
		}
		for l := range 32 {
			for i := range 4 {
				r, n := mmaC(l, i)
				want, scale := C[r][n], math.Abs(C[r][n])
				for k := range m.k {
					want += A[r][k] * B[k][n]
					scale += math.Abs(A[r][k] * B[k][n])
				}
				if g := float64(got[(w*32+l)*4+i]); !(math.Abs(g-want) <= 1e-6*scale) {
					t.Errorf("%s: warp %d lane %d D[%d]: %g, want %g (D(%d, %d) = A·B + C)", m.name, w, l, i, g, want, r, n)
				}
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
	all := concatGrads
	for _, c := range [][4]int{{1, 1, 1, 1}, {3, 6, 17, 3}, {2, 8, 300, 4}, {1, 64, 9, 32}, {3, 4, 1000, 2}, {2, 12, 1000, 1}} {
		x, gamma, beta, dy, dx, dgamma, dbeta := s.groupNormInputs(c)
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
	s.groupNormDropout(t)
}

// concatGrads is the group-norm backward's three results as one tensor, for one comparison.
func concatGrads(dx, dgamma, dbeta *tensor.Tensor) *tensor.Tensor {
	return tensor.Concat(nil, 0, dx.Reshape(dx.Len()), dgamma, dbeta)
}

// groupNormInputs draws the operands of a group-norm case c (N, C, S, G): x (N, C, S) with mean 3,
// γ, β, dy, and nonzero dx, dγ, dβ to accumulate into.
func (s *suite) groupNormInputs(c [4]int) (x, gamma, beta, dy, dx, dgamma, dbeta *tensor.Tensor) {
	x = s.randn(c[0], c[1], c[2])
	tensor.AddScalar(x, x, 3)
	gamma, beta, dy = s.randn(c[1]), s.randn(c[1]), s.randn(c[0], c[1], c[2])
	dx, dgamma, dbeta = s.randn(c[0], c[1], c[2]), s.randn(c[1]), s.randn(c[1])
	return
}

// tolFusedNorm: the fused group norm + SiLU + dropout against the Reference's unfused ops. Their
// float32 arithmetic leaves normalised MSEs near 1e-13 (the backward's group sums); a 0.1 % error
// of the mask's scale or of a backward term leaves 1e-6 (scripts/mutations.py).
const tolFusedNorm = 1e-9

// groupNormDropout checks tensor.GroupNormSiLUDropout and its backward against the Reference
// device running the ops they fuse — GroupNormSiLU then Dropout (rng.Stream.DropoutFrom's mask);
// Dropout of dy then GroupNormSiLUBackward — on odd sizes, groups whose backward keeps x and dy in
// shared memory, x alone, or neither (the mask is applied where dy is loaded, a different place in
// each), p = 0.1 and 0.5, masks from element 0 and from an element past 2³², dx written and
// accumulated; and against the device's own unfused kernels (hg_group_norm_silu, hg_dropout,
// hg_group_norm_backward), bit for bit: a training step's result does not change with the fusion.
func (s *suite) groupNormDropout(t *testing.T) {
	st := rng.Stream{Key: 0xd20f, Step: 7, ID: rng.DropoutStream(3)}
	all := concatGrads
	for i, c := range [][4]int{{1, 1, 1, 1}, {3, 6, 17, 3}, {2, 8, 300, 4}, {2, 6, 1000, 1}, {2, 12, 1000, 1}, {2, 16, 25, 4}} {
		x, gamma, beta, dy, dx, dgamma, dbeta := s.groupNormInputs(c)
		g := c[3]
		for j, p := range []float64{0.1, 0.5} {
			first := uint64(0)
			if (i+j)%2 == 1 {
				first = 1<<32 + 5
			}
			name := fmt.Sprintf("%v p=%g first=%d", c, p, first)
			fused := func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.GroupNormSiLUDropout(nil, in[0], in[1], in[2], g, 1e-5, st, p, first)
			}
			unfused := func(in ...*tensor.Tensor) *tensor.Tensor {
				return tensor.Dropout(nil, tensor.GroupNormSiLU(nil, in[0], in[1], in[2], g, 1e-5), st, p, first)
			}
			s.against("GroupNormSiLUDropout "+name, fused, unfused, x, gamma, beta)
			for _, keep := range []float32{0, 1} {
				fused := func(in ...*tensor.Tensor) *tensor.Tensor {
					return all(tensor.GroupNormSiLUDropoutBackward(in[4], in[0], in[1], in[2], in[3], in[5], in[6], g, 1e-5, keep, st, p, first),
						in[5], in[6])
				}
				unfused := func(in ...*tensor.Tensor) *tensor.Tensor {
					masked := tensor.Dropout(nil, in[3], st, p, first)
					return all(tensor.GroupNormSiLUBackward(in[4], in[0], in[1], in[2], masked, in[5], in[6], g, 1e-5, keep), in[5], in[6])
				}
				s.against(fmt.Sprintf("GroupNormSiLUDropoutBackward %s β=%g", name, keep), fused, unfused, x, gamma, beta, dy, dx, dgamma, dbeta)
			}
		}
	}
}

// against runs fused on the device under test and unfused on the Reference device (normalised MSE
// within tolFusedNorm) and on the device under test (the same bits), each on fresh copies of the
// host inputs.
func (s *suite) against(name string, fused, unfused func(in ...*tensor.Tensor) *tensor.Tensor, in ...*tensor.Tensor) {
	s.t.Helper()
	on := func(dev tensor.Device, f func(in ...*tensor.Tensor) *tensor.Tensor) []float32 {
		d := make([]*tensor.Tensor, len(in))
		for i, h := range in {
			d[i] = s.to(dev, h)
		}
		y := f(d...)
		if err := y.Err(); err != nil {
			s.t.Fatalf("%s on %s: %v", name, dev.Name(), err)
		}
		return s.host(y)
	}
	got := on(s.dev, fused)
	s.check(name, got, on(tensor.Reference, unfused), tolFusedNorm)
	if want := on(s.dev, unfused); !slices.EqualFunc(got, want, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
		s.t.Errorf("%s: differs from the device's unfused kernels", name)
	}
}
