package cuda

import (
	"fmt"
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/hold/holdops"
	"holdgo/optim"
	"holdgo/tensor"
)

// The kernel suite, in the spirit of ggml's test-backend-ops: every op of the tensor op list and
// every fused family on awkward sizes, compared with the Go reference by normalised MSE. It runs
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

var awkward = []int{0, 1, 3, 17, 1000, 4099}

func newSuiteRNG() *tensor.RNG { return tensor.NewRNG(7) }

func runKernelSuite(t *testing.T, dev *Device) {
	s := &suite{t: t, dev: dev, rng: newSuiteRNG()}
	t.Run("elementwise", s.elementwise)
	t.Run("broadcast", s.broadcast)
	t.Run("layout", s.layout)
	t.Run("reduce", s.reduce)
	t.Run("matmul", s.matmul)
	t.Run("image ops", s.imageOps)
	t.Run("softmax", s.softmax)
	t.Run("groupnorm", s.groupNorm)
	t.Run("im2col", s.im2col)
	t.Run("conv", s.conv)
	t.Run("groupnorm grad", s.groupNormGrad)
	t.Run("fir", s.fir)
	t.Run("adam", s.adam)
	t.Run("hold", s.hold)
	t.Run("lietrotter", s.lieTrotter)
	t.Run("random", s.random)            // train_suite_test.go
	t.Run("train step", s.trainStep)     // train_suite_test.go
	t.Run("staged batch", s.stagedBatch) // train_suite_test.go
	t.Run("time embedding", s.timeEmbed) // train_suite_test.go
}

func (s *suite) elementwise(t *testing.T) {
	s.t = t
	unary := map[string]func(out, a *tensor.Tensor) *tensor.Tensor{
		"Neg": tensor.Neg, "Exp": tensor.Exp, "Log": tensor.Log, "Sqrt": tensor.Sqrt, "Square": tensor.Square,
		"Tanh": tensor.Tanh, "Sigmoid": tensor.Sigmoid, "SiLU": tensor.SiLU,
		"AddScalar": func(o, a *tensor.Tensor) *tensor.Tensor { return tensor.AddScalar(o, a, 0.37) },
		"MulScalar": func(o, a *tensor.Tensor) *tensor.Tensor { return tensor.MulScalar(o, a, -1.7) },
	}
	pair := map[string]func(out, a, b *tensor.Tensor) *tensor.Tensor{
		"SiLUGrad": tensor.SiLUGrad, "TanhGrad": tensor.TanhGrad, "SigmoidGrad": tensor.SigmoidGrad,
		"Add": tensor.Add, "Sub": tensor.Sub, "Mul": tensor.Mul, "Div": tensor.Div,
	}
	for _, n := range awkward {
		for name, f := range unary {
			x := s.randn(n)
			if name == "Log" || name == "Sqrt" {
				x = s.randu(0.05, 4, n)
			}
			s.compare(fmt.Sprintf("%s/%d", name, n), tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return f(nil, in[0]) }, x)
		}
		for name, f := range pair {
			b := s.randn(n)
			if name == "Div" {
				b = s.randu(0.5, 2, n)
			}
			s.compare(fmt.Sprintf("%s/%d", name, n), tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return f(nil, in[0], in[1]) }, s.randn(n), b)
		}
		s.compare(fmt.Sprintf("Fill/%d", n), tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Fill(in[0], 2.5) }, s.randn(n))
		s.compare(fmt.Sprintf("Copy/%d", n), tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Copy(nil, in[0]) }, s.randn(n))
	}
	// In place: the destination aliases an operand.
	s.compare("Add in place", tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Add(in[0], in[0], in[1]) }, s.randn(33), s.randn(33))
	s.compare("Exp in place", tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Exp(in[0], in[0]) }, s.randn(33))
}

func (s *suite) broadcast(t *testing.T) {
	s.t = t
	cases := [][2][]int{
		{{3, 1, 5}, {4, 5}}, {{17}, {1}}, {{1}, {17}}, {{2, 3}, {2, 3}}, {{0, 3}, {3}},
		{{2, 3, 4, 5, 6, 7, 2}, {3, 1, 5, 1, 7, 1}}, {{6, 1, 1, 9}, {1, 5, 7, 1}}, {{1000, 1}, {1, 17}},
	}
	ops := map[string]func(out, a, b *tensor.Tensor) *tensor.Tensor{
		"Add": tensor.Add, "Sub": tensor.Sub, "Mul": tensor.Mul, "Div": tensor.Div, "Eq": tensor.Eq,
	}
	for _, c := range cases {
		for name, f := range ops {
			a, b := s.randn(c[0]...), s.randn(c[1]...)
			if name == "Div" {
				b = s.randu(0.5, 2, c[1]...)
			}
			if name == "Eq" { // small integers, so that some compare equal
				for _, x := range []*tensor.Tensor{a, b} {
					for i, v := range x.Data() {
						x.Data()[i] = float32(math.Round(float64(v)))
					}
				}
			}
			s.compare(fmt.Sprintf("%s %v %v", name, c[0], c[1]), tolElementwise,
				func(in ...*tensor.Tensor) *tensor.Tensor { return f(nil, in[0], in[1]) }, a, b)
		}
	}
}

func (s *suite) layout(t *testing.T) {
	s.t = t
	for _, c := range []struct {
		shape, axes []int
	}{{[]int{2, 3, 4, 5}, []int{3, 1, 0, 2}}, {[]int{17, 3}, []int{1, 0}}, {[]int{1, 1000}, []int{1, 0}},
		{[]int{2, 3, 2, 3, 2, 3, 2}, []int{6, 4, 2, 0, 1, 3, 5}}, {[]int{0, 3}, []int{1, 0}}, {[]int{4, 5, 6}, []int{0, 1, 2}}} {
		axes := c.axes
		s.compare(fmt.Sprintf("Permute %v %v", c.shape, axes), tolElementwise,
			func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Permute(nil, in[0], axes...) }, s.randn(c.shape...))
	}
	for _, axis := range []int{0, 1, 2} {
		sa, sb, sc := []int{3, 4, 5}, []int{3, 4, 5}, []int{3, 4, 5}
		sa[axis], sb[axis], sc[axis] = 1, 17, 0
		s.compare(fmt.Sprintf("Concat axis %d", axis), tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.Concat(nil, axis, in...)
		}, s.randn(sa...), s.randn(sb...), s.randn(sc...))
		s.compare(fmt.Sprintf("Slice axis %d", axis), tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.Slice(nil, in[0], axis, 1, 3)
		}, s.randn(4, 5, 6))
		small := []int{4, 5, 6}
		small[axis] = 2
		s.compare(fmt.Sprintf("SliceAdd axis %d", axis), tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.SliceAdd(in[0], in[1], axis, 1)
		}, s.randn(4, 5, 6), s.randn(small...))
	}
	idx := []int{4, 0, 4, 2, 2, 2, 1}
	s.compare("Gather", tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Gather(nil, in[0], idx) }, s.randn(5, 3, 7))
	s.compare("ScatterAdd", tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.ScatterAdd(in[0], in[1], idx) },
		s.randn(5, 3, 7), s.randn(7, 3, 7))
	s.compare("Gather empty", tolElementwise, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Gather(nil, in[0], nil) }, s.randn(5, 3))
}

func (s *suite) reduce(t *testing.T) {
	s.t = t
	cases := []struct {
		shape []int
		axes  []int
	}{
		{[]int{3, 17, 5}, []int{0}}, {[]int{3, 17, 5}, []int{1}}, {[]int{3, 17, 5}, []int{2}},
		{[]int{3, 17, 5}, []int{0, 2}}, {[]int{3, 17, 5}, []int{0, 1}}, {[]int{3, 17, 5}, nil},
		{[]int{4099}, nil}, {[]int{5, 1000}, []int{1}}, {[]int{1000, 3}, []int{0}}, {[]int{1, 1}, []int{0}},
		{[]int{2, 0, 3}, []int{1}}, {[]int{0, 4}, []int{1}}, {[]int{2, 3, 4, 5}, []int{1, 3}},
	}
	for _, c := range cases {
		axes := c.axes
		s.compare(fmt.Sprintf("Sum %v %v", c.shape, axes), tolReduce,
			func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Sum(nil, in[0], axes...) }, s.randn(c.shape...))
		s.compare(fmt.Sprintf("Max %v %v", c.shape, axes), tolReduce,
			func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Max(nil, in[0], axes...) }, s.randn(c.shape...))
	}
	x := s.randn(4, 300)
	x.Data()[310] = float32(math.NaN())
	s.compare("Max propagates NaN", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Max(nil, in[0], 1) }, x)
}

func (s *suite) matmul(t *testing.T) {
	s.t = t
	for _, c := range [][3]int{{1, 1, 1}, {3, 17, 5}, {65, 33, 70}, {64, 64, 64}, {129, 1, 3}, {2, 0, 3}, {17, 100, 1}} {
		m, k, n := c[0], c[1], c[2]
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				sa, sb := []int{m, k}, []int{k, n}
				if ta {
					sa = []int{k, m}
				}
				if tb {
					sb = []int{n, k}
				}
				s.compare(fmt.Sprintf("MatMul %v ta=%v tb=%v", c, ta, tb), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
					return tensor.MatMul(nil, in[0], in[1], ta, tb)
				}, s.randn(sa...), s.randn(sb...))
			}
		}
	}
	s.compare("MatMul batched", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.MatMul(nil, in[0], in[1], false, true) },
		s.randn(2, 3, 17, 5), s.randn(2, 3, 9, 5))
	s.compare("MatMul shared right", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.MatMul(nil, in[0], in[1], false, false) },
		s.randn(4, 17, 5), s.randn(5, 9))
	s.compare("MatMul shared left", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.MatMul(nil, in[0], in[1], true, false) },
		s.randn(5, 17), s.randn(4, 5, 9))
	s.compare("MatMulAcc beta", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
		return tensor.MatMulAcc(in[2], in[0], in[1], false, false, 0.5)
	},
		s.randn(33, 20), s.randn(20, 70), s.randn(33, 70))
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

func (s *suite) softmax(t *testing.T) {
	s.t = t
	for _, c := range [][2]int{{1, 1}, {3, 17}, {17, 1000}, {2, 4099}, {0, 5}} {
		rows, cols := c[0], c[1]
		x := s.randn(rows, cols)
		tensor.MulScalar(x, x, 4)
		got := s.fused("softmax", func(in []*tensor.Tensor) error { return s.dev.Softmax(in[1], in[0]) }, x, tensor.Zeros(rows, cols))
		s.check(fmt.Sprintf("Softmax %v", c), got[1], refSoftmax(x.Data(), rows, cols), tolReduce)
		y := tensor.FromSlice(refSoftmax(x.Data(), rows, cols), rows, cols)
		dy := s.randn(rows, cols)
		got = s.fused("softmax backward", func(in []*tensor.Tensor) error { return s.dev.SoftmaxBackward(in[2], in[0], in[1]) },
			y, dy, tensor.Zeros(rows, cols))
		s.check(fmt.Sprintf("SoftmaxBackward %v", c), got[2], refSoftmaxBackward(y.Data(), dy.Data(), rows, cols), tolReduce)
	}
}

func (s *suite) groupNorm(t *testing.T) {
	s.t = t
	for _, c := range [][4]int{{1, 1, 1, 1}, {2, 6, 17, 3}, {3, 32, 64, 8}, {1, 4, 1000, 2}} {
		n, ch, sp, g := c[0], c[1], c[2], c[3]
		x, gamma, beta := s.randn(n, ch, sp), s.randn(ch), s.randn(ch)
		tensor.AddScalar(x, x, 3) // a mean far from 0 tests the two-pass variance
		got := s.fused("group norm", func(in []*tensor.Tensor) error {
			return s.dev.GroupNorm(in[3], in[4], in[5], in[0], in[1], in[2], g, 1e-5)
		}, x, gamma, beta, tensor.Zeros(n, ch, sp), tensor.Zeros(n, g), tensor.Zeros(n, g))
		y, mean, rstd := refGroupNorm(x.Data(), gamma.Data(), beta.Data(), n, ch, sp, g, 1e-5)
		s.check(fmt.Sprintf("GroupNorm %v y", c), got[3], y, tolReduce)
		s.check(fmt.Sprintf("GroupNorm %v mean", c), got[4], mean, tolReduce)
		s.check(fmt.Sprintf("GroupNorm %v rstd", c), got[5], rstd, tolReduce)
	}
}

func (s *suite) im2col(t *testing.T) {
	s.t = t
	for _, c := range []struct {
		n, ch, h, w int
		g           Conv2D
	}{
		{1, 1, 1, 1, Conv2D{KH: 1, KW: 1}},
		{2, 3, 7, 9, Conv2D{KH: 3, KW: 3, PadH: 1, PadW: 1}},
		{1, 2, 8, 8, Conv2D{KH: 3, KW: 2, StrideH: 2, StrideW: 3, PadH: 1}},
		{1, 2, 17, 13, Conv2D{KH: 3, KW: 3, DilH: 2, DilW: 2, PadH: 2, PadW: 2}},
	} {
		oh, ow := c.g.OutSize(c.h, c.w)
		x := s.randn(c.n, c.ch, c.h, c.w)
		col := s.randn(c.n, c.ch*c.g.KH*c.g.KW, oh*ow)
		got := s.fused("im2col", func(in []*tensor.Tensor) error { return s.dev.Im2Col(in[1], in[0], c.g) }, x, tensor.Zeros(col.Shape()...))
		want := make([]float32, col.Len())
		refIm2Col(x.Data(), want, c.n, c.ch, c.h, c.w, c.g, false)
		s.check(fmt.Sprintf("Im2Col %+v", c), got[1], want, tolElementwise)
		got = s.fused("col2im", func(in []*tensor.Tensor) error { return s.dev.Col2Im(in[1], in[0], c.g) }, col, tensor.Zeros(x.Shape()...))
		wantX := make([]float32, x.Len())
		refIm2Col(wantX, col.Data(), c.n, c.ch, c.h, c.w, c.g, true)
		s.check(fmt.Sprintf("Col2Im %+v", c), got[1], wantX, tolReduce)
	}
}

func (s *suite) fir(t *testing.T) {
	s.t = t
	for _, c := range []struct {
		planes, h, w, kh, kw int
		f                    FIR
	}{
		{3, 8, 8, 4, 4, FIR{Up: 2, Pad0: 2, Pad1: 1}},     // FIR upsampling ×2
		{3, 16, 16, 4, 4, FIR{Down: 2, Pad0: 1, Pad1: 1}}, // FIR downsampling ×2
		{2, 5, 7, 3, 3, FIR{Pad0: 1, Pad1: 1}},            // plain blur
		{1, 1, 1, 1, 1, FIR{}},
		{2, 9, 6, 4, 2, FIR{Up: 2, Down: 2, Pad0: 1, Pad1: 2}},
	} {
		x, k := s.randn(c.planes, c.h, c.w), s.randu(0, 1, c.kh, c.kw)
		oh, ow := c.f.OutSize(c.h, c.kh), c.f.OutSize(c.w, c.kw)
		got := s.fused("upfirdn2d", func(in []*tensor.Tensor) error { return s.dev.UpFirDn2D(in[2], in[0], in[1], c.f) },
			x, k, tensor.Zeros(c.planes, oh, ow))
		s.check(fmt.Sprintf("UpFirDn2D %+v", c), got[2], refUpFirDn2D(x.Data(), k.Data(), c.planes, c.h, c.w, c.kh, c.kw, c.f), tolReduce)
	}
}

func (s *suite) adam(t *testing.T) {
	s.t = t
	for _, n := range []int{1, 17, 4099} {
		params, grads := s.randn(n), s.randn(n)
		ref := optim.NewAdam(n)
		want := append([]float32(nil), params.Data()...)
		dev := make([]*tensor.Tensor, 4)
		for i, h := range []*tensor.Tensor{params, grads, tensor.Zeros(n), tensor.Zeros(n)} {
			dev[i] = s.to(s.dev, h)
		}
		for step := 1; step <= 3; step++ {
			ref.Update(want, grads.Data(), 1e-3)
			if err := s.dev.Adam(dev[0], dev[1], dev[2], dev[3], ref.Beta1, ref.Beta2, ref.Eps, 1e-3, step); err != nil {
				t.Fatal(err)
			}
		}
		s.check(fmt.Sprintf("Adam/%d params", n), s.host(dev[0]), want, tolElementwise)
		s.check(fmt.Sprintf("Adam/%d m", n), s.host(dev[2]), ref.M, tolElementwise)
		s.check(fmt.Sprintf("Adam/%d v", n), s.host(dev[3]), ref.V, tolElementwise)

		shadow := s.randn(n)
		ema := optim.NewEMA(0.999, shadow.Data())
		devShadow, devParams := s.to(s.dev, shadow), s.to(s.dev, params)
		for range 3 {
			n := float64(ema.Updates + 1)
			decay := min(ema.Rate, (1+n)/(10+n))
			ema.Update(params.Data())
			if err := s.dev.EMA(devShadow, devParams, decay); err != nil {
				t.Fatal(err)
			}
		}
		s.check(fmt.Sprintf("EMA/%d", n), s.host(devShadow), ema.Shadow, tolElementwise)
	}
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
func (s *suite) imageOps(t *testing.T) {
	s.t = t
	for _, shape := range [][]int{{1, 1}, {3, 17}, {2, 5, 1000}} {
		s.compare(fmt.Sprintf("Softmax %v", shape), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor { return tensor.Softmax(nil, in[0]) }, s.randn(shape...))
		s.compare(fmt.Sprintf("SoftmaxGrad %v", shape), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.SoftmaxGrad(nil, in[0], in[1])
		}, s.randu(0, 1, shape...), s.randn(shape...))
	}
	for _, c := range [][4]int{{1, 4, 1, 1}, {2, 8, 17, 4}, {2, 64, 9, 16}} {
		s.compare(fmt.Sprintf("GroupNorm %v", c), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.GroupNorm(nil, in[0], in[1], in[2], c[3], 1e-5)
		}, s.randn(c[0], c[1], c[2]), s.randn(c[1]), s.randn(c[1]))
	}
	for _, g := range []tensor.FIRGeom{tensor.FIRUpsample, tensor.FIRDownsample, tensor.FIRBlur} {
		s.compare(fmt.Sprintf("UpFIRDn2d %+v", g), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.UpFIRDn2d(nil, in[0], g)
		}, s.randn(2, 3, 8, 6))
	}
}

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

// groupNormGrad checks the group-norm gradients (and the fused group norm + SiLU with its dz)
// against tensor.Reference, with a mean far from 0
// (the one-pass Welford statistics) and spatial sizes below and above a block.
func (s *suite) groupNormGrad(t *testing.T) {
	s.t = t
	for _, c := range [][4]int{{1, 1, 1, 1}, {3, 6, 17, 3}, {2, 8, 300, 4}, {1, 64, 9, 32}, {3, 4, 1000, 2}} {
		x := s.randn(c[0], c[1], c[2])
		tensor.AddScalar(x, x, 3)
		gamma, dy := s.randn(c[1]), s.randn(c[0], c[1], c[2])
		g := c[3]
		s.compare(fmt.Sprintf("GroupNormGrad %v", c), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.GroupNormGrad(nil, in[0], in[1], in[2], g, 1e-5)
		}, x, gamma, dy)
		s.compare(fmt.Sprintf("GroupNormParamGrad %v", c), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.GroupNormParamGrad(nil, in[0], in[1], g, 1e-5)
		}, x, dy)
		beta := s.randn(c[1])
		s.compare(fmt.Sprintf("GroupNormSiLU %v", c), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.GroupNormSiLU(nil, in[0], in[1], in[2], g, 1e-5)
		}, x, gamma, beta)
		s.compare(fmt.Sprintf("GroupNormSiLUGrad %v", c), tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
			return tensor.GroupNormSiLUGrad(nil, in[0], in[1], in[2], in[3], g, 1e-5)
		}, x, gamma, beta, dy)
	}
	// Rank 4 as NCSN++ uses it.
	s.compare("GroupNormGrad NCHW", tolReduce, func(in ...*tensor.Tensor) *tensor.Tensor {
		return tensor.GroupNormGrad(nil, in[0], in[1], in[2], 4, 1e-6)
	}, s.randn(2, 16, 5, 7), s.randn(16), s.randn(2, 16, 5, 7))
}
