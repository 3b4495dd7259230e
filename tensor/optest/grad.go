package optest

import (
	"errors"
	"fmt"
	"math"

	"holdgo/autograd"
	"holdgo/rng"
	"holdgo/tensor"
)

// The gradient mode: every op the autograd tape differentiates (autograd.Differentiable), on a few
// awkward shapes, its backward pass on the device under test against central finite differences
// of a float64-accurate forward pass.
//
// The finite differences run the forward pass on a device whose kernels evaluate every op in float64
// and round only the output to float32 (tensor.Reference) and project the output onto fixed random
// weights in float64. The central difference D(h) = (f(x+h) − f(x−h)) / 2h = f′ + h²f‴/3! +
// h⁴f⁽⁵⁾/5! + … is Richardson-extrapolated from the steps h, h/2 and h/4,
//
//	D = (64·D(h/4) − 20·D(h/2) + D(h)) / 45,
//
// which cancels the h² and h⁴ terms. The remaining error is the float32 output rounding divided by
// the step, so the step is as large as the op allows (GradStep): ops that are polynomials of degree
// ≤ 6 in each input (linear, bilinear, quadratic) are differentiated exactly with any step and take
// h = 1; smooth ops take h = 0.1; Max, piecewise linear, takes a step below the gap between its
// entries.

// GradCase is one differentiable op of the tape on one set of input shapes.
type GradCase struct {
	Op   string // a name of autograd.Differentiable
	Name string
	// Inputs are the shapes of the inputs, drawn N(0, 1); with Positive the last one (Log, Sqrt,
	// Div's divisor) is drawn as |N(0, 1)| + 0.5.
	Inputs   [][]int
	Positive bool
	// F records the op (and whatever it needs around it) on g. A case whose F computes on the host
	// (ScalarLoss) runs only where its inputs live on the CPU: HostOnly.
	F        func(g *autograd.Tape, in []*autograd.Value) *autograd.Value
	HostOnly bool
}

type gradCase struct {
	inputs   [][]int
	positive bool
	f        func(g *autograd.Tape, in []*autograd.Value) *autograd.Value
}

func unaryGC(f func(g *autograd.Tape, x *autograd.Value) *autograd.Value, positive bool) []gradCase {
	var cs []gradCase
	for _, sh := range [][]int{{1}, {7}, {3, 1, 5}} {
		cs = append(cs, gradCase{[][]int{sh}, positive, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return f(g, in[0]) }})
	}
	return cs
}

func binaryGC(f func(g *autograd.Tape, a, b *autograd.Value) *autograd.Value) []gradCase {
	var cs []gradCase
	for _, p := range [][2][]int{{{4, 3}, {4, 3}}, {{4, 3}, {3}}, {{1, 3}, {5, 1}}, {{2, 1, 3}, {1, 4, 1}}, {{1}, {1}}} {
		cs = append(cs, gradCase{[][]int{p[0], p[1]}, true, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return f(g, in[0], in[1]) }})
	}
	return cs
}

func matGC(a, b []int, ta, tb bool) gradCase {
	return gradCase{[][]int{a, b}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.MatMul(in[0], in[1], ta, tb) }}
}

// gradTable has a case list for every name in autograd.Differentiable.
func gradTable() map[string][]gradCase {
	m := map[string][]gradCase{
		"Neg":       unaryGC((*autograd.Tape).Neg, false),
		"AddScaled": binaryGC(func(g *autograd.Tape, a, b *autograd.Value) *autograd.Value { return g.AddScaled(a, b, 0.7) }),
		"Exp":       unaryGC((*autograd.Tape).Exp, false),
		"Log":       unaryGC((*autograd.Tape).Log, true),
		"Sqrt":      unaryGC((*autograd.Tape).Sqrt, true),
		"Square":    unaryGC((*autograd.Tape).Square, false),
		"Tanh":      unaryGC((*autograd.Tape).Tanh, false),
		"Sin":       unaryGC((*autograd.Tape).Sin, false),
		"Softplus":  unaryGC((*autograd.Tape).Softplus, false),
		"Sigmoid":   unaryGC((*autograd.Tape).Sigmoid, false),
		"SiLU":      unaryGC((*autograd.Tape).SiLU, false),
		"AddScalar": unaryGC(func(g *autograd.Tape, x *autograd.Value) *autograd.Value { return g.AddScalar(x, 0.75) }, false),
		"MulScalar": unaryGC(func(g *autograd.Tape, x *autograd.Value) *autograd.Value { return g.MulScalar(x, -1.5) }, false),
		"Add":       binaryGC((*autograd.Tape).Add),
		"Sub":       binaryGC((*autograd.Tape).Sub),
		"Mul":       binaryGC((*autograd.Tape).Mul),
		"Div":       binaryGC((*autograd.Tape).Div),
		"MatMul": {
			matGC([]int{3, 4}, []int{4, 5}, false, false), matGC([]int{4, 3}, []int{4, 5}, true, false),
			matGC([]int{3, 4}, []int{5, 4}, false, true), matGC([]int{4, 3}, []int{5, 4}, true, true),
			matGC([]int{2, 3, 1}, []int{2, 1, 5}, false, false), matGC([]int{2, 3, 4}, []int{4, 5}, false, false),
			matGC([]int{2, 4, 3}, []int{5, 4}, true, true), matGC([]int{4, 5}, []int{3, 5, 2}, false, false),
		},
		"Linear": {
			{[][]int{{5, 3}, {4, 3}, {4}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Linear(in[0], in[1], in[2]) }},
			{[][]int{{2, 3, 1}, {1, 1}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Linear(in[0], in[1], nil) }},
		},
		"Sum": {
			{[][]int{{3, 5}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Sum(in[0]) }},
			{[][]int{{2, 3, 5}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Sum(in[0], 0, 2) }},
			{[][]int{{4, 1}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Sum(in[0], -1) }},
		},
		"Mean": {
			{[][]int{{3, 5}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Mean(in[0], 1) }},
			{[][]int{{2, 3, 5}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Mean(in[0]) }},
		},
		"Max": {
			{[][]int{{3, 5}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Max(in[0], 1) }},
			{[][]int{{2, 3, 5}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Max(in[0], 0, 2) }},
		},
		"Reshape": {{[][]int{{2, 6}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Square(g.Reshape(in[0], 3, -1)) }}},
		"Permute": {{[][]int{{2, 3, 4}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Permute(in[0], 2, 0, 1) }}},
		"Transpose": {
			{[][]int{{3, 5}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Transpose(in[0]) }},
			{[][]int{{2, 1, 3}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Transpose(in[0]) }},
		},
		"Concat": {
			{[][]int{{2, 3}, {1, 3}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Concat(0, in[0], in[1]) }},
			{[][]int{{4, 1}, {4, 6}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Concat(-1, in[0], in[1]) }},
		},
		"Slice": {{[][]int{{3, 7}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value { return g.Slice(in[0], 1, 2, 5) }}},
		"Split": {{[][]int{{5, 4}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value {
			p := g.Split(in[0], 0, 2, 3)
			return g.Mul(p[0], g.Slice(p[1], 0, 1, 3))
		}}},
		"Gather": {{[][]int{{4, 3}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value {
			return g.Gather(in[0], []int{3, 0, 3, 1, 1})
		}}},
		"ScalarLoss": {{[][]int{{3, 2}}, false, func(g *autograd.Tape, in []*autograd.Value) *autograd.Value {
			// loss = Σ x³ computed outside the tape, gradient 3x².
			x := in[0].T.Data()
			var loss float32
			dx := tensor.Zeros(in[0].Shape()...)
			for i, v := range x {
				loss += v * v * v
				dx.Data()[i] = 3 * v * v
			}
			return g.ScalarLoss("cube", in[0], loss, dx)
		}}},
	}

	conv := func(x, w []int, bias bool, stride, pad int) gradCase {
		in := [][]int{x, w}
		if bias {
			in = append(in, []int{w[0]})
		}
		return gradCase{in, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			var b *autograd.Value
			if bias {
				b = v[2]
			}
			return g.Conv2d(v[0], v[1], b, stride, pad)
		}}
	}
	m["Conv2d"] = []gradCase{
		conv([]int{2, 3, 5, 5}, []int{4, 3, 3, 3}, true, 1, 1),
		conv([]int{1, 2, 6, 6}, []int{3, 2, 3, 3}, true, 2, 1),
		conv([]int{1, 2, 7, 7}, []int{2, 2, 3, 3}, false, 2, 0),
		conv([]int{2, 5, 3, 4}, []int{3, 5, 1, 1}, true, 1, 0),
		// a per-sample bias (N, O): NCSN++'s conv bias + time embedding
		{[][]int{{2, 3, 5, 5}, {4, 3, 3, 3}, {2, 4}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value { return g.Conv2d(v[0], v[1], v[2], 1, 1) }},
		// a per-channel and a per-sample bias (Conv2dTwoBias: NCSN++'s Conv_0)
		{[][]int{{2, 3, 5, 5}, {4, 3, 3, 3}, {4}, {2, 4}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			return g.Conv2dTwoBias(v[0], v[1], v[2], v[3], 1, 1)
		}},
	}
	// the residual join in the output pass (NCSN++'s Conv_1 and (x + h)/√2), stride 1 and 2
	m["Conv2dResidual"] = []gradCase{
		{[][]int{{2, 3, 5, 5}, {4, 3, 3, 3}, {4}, {2, 4, 5, 5}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			return g.Conv2dResidual(v[0], v[1], v[2], v[3], 0.70710677, 1, 1)
		}},
		{[][]int{{1, 2, 6, 6}, {3, 2, 3, 3}, {3}, {1, 3, 3, 3}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			return g.Conv2dResidual(v[0], v[1], v[2], v[3], -1.5, 2, 1)
		}},
		// the residual is the convolution's own input (a ResnetBlock without Conv_Skip on its input)
		{[][]int{{2, 4, 5, 5}, {4, 4, 3, 3}, {4}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			return g.Conv2dResidual(v[0], v[1], v[2], v[0], 0.70710677, 1, 1)
		}},
	}
	gn := func(shape []int, groups int) gradCase {
		c := shape[1]
		return gradCase{[][]int{shape, {c}, {c}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			return g.GroupNorm(v[0], v[1], v[2], groups, 1e-6)
		}}
	}
	m["GroupNorm"] = []gradCase{gn([]int{2, 4, 3, 3}, 2), gn([]int{1, 6, 5}, 3), gn([]int{2, 8, 2, 2}, 1)}
	gnSiLU := func(shape []int, groups int) gradCase {
		c := shape[1]
		return gradCase{[][]int{shape, {c}, {c}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			return g.GroupNormSiLU(v[0], v[1], v[2], groups, 1e-6)
		}}
	}
	m["GroupNormSiLU"] = []gradCase{gnSiLU([]int{2, 4, 3, 3}, 2), gnSiLU([]int{1, 6, 5}, 3), gnSiLU([]int{2, 8, 2, 2}, 1)}
	gnSiLUDrop := func(shape []int, groups int, p float64, first int) gradCase {
		c := shape[1]
		return gradCase{[][]int{shape, {c}, {c}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			// the same mask every evaluation
			return g.GroupNormSiLUDropout(v[0], v[1], v[2], groups, 1e-6, p, &rng.Stream{Key: 5, ID: rng.DropoutStream(1)}, first)
		}}
	}
	m["GroupNormSiLUDropout"] = []gradCase{gnSiLUDrop([]int{2, 4, 3, 3}, 2, 0.3, 0), gnSiLUDrop([]int{1, 6, 5}, 3, 0.5, 7),
		gnSiLUDrop([]int{2, 8, 2, 2}, 1, 0.1, 3)}
	m["Softmax"] = []gradCase{
		{[][]int{{3, 5}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value { return g.Softmax(v[0]) }},
		{[][]int{{2, 1, 7}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value { return g.Softmax(v[0]) }},
	}
	m["Attention"] = []gradCase{
		{[][]int{{2, 3, 5}, {2, 3, 5}, {2, 3, 5}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value { return g.Attention(v[0], v[1], v[2]) }},
		{[][]int{{1, 4, 9}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value { return g.Attention(v[0], v[0], v[0]) }},
	}
	fir := func(shape []int, geom tensor.FIRGeom) gradCase {
		return gradCase{[][]int{shape}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value { return g.UpFIRDn2d(v[0], geom) }}
	}
	m["UpFIRDn2d"] = []gradCase{
		fir([]int{1, 2, 4, 4}, tensor.FIRUpsample), fir([]int{2, 1, 6, 6}, tensor.FIRDownsample),
		fir([]int{1, 2, 5, 5}, tensor.FIRDownsample), fir([]int{1, 1, 4, 4}, tensor.FIRBlur),
		// conv_downsample_2d of the input pyramid: blur, then a stride-2 3×3 convolution.
		{[][]int{{1, 2, 6, 6}, {3, 2, 3, 3}, {3}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
			return g.Conv2d(g.UpFIRDn2d(v[0], tensor.FIRBlur), v[1], v[2], 2, 0)
		}},
	}
	m["Dropout"] = []gradCase{{[][]int{{4, 6}}, false, func(g *autograd.Tape, v []*autograd.Value) *autograd.Value {
		return g.Dropout(v[0], 0.3, &rng.Stream{Key: 5, ID: rng.DropoutStream(0)}) // the same mask every evaluation
	}}}
	m["Concat"] = append(m["Concat"], gradCase{[][]int{{2, 3, 2, 2}, {2, 1, 2, 2}}, false,
		func(g *autograd.Tape, v []*autograd.Value) *autograd.Value { return g.Concat(1, v[0], v[1]) }})
	return m
}

// GradCases returns the gradient table in autograd.Differentiable's order; every differentiable op
// has at least one case (TestGradTableCoversOps).
func GradCases() []GradCase {
	m := gradTable()
	var out []GradCase
	for _, op := range autograd.Differentiable {
		for i, c := range m[op] {
			out = append(out, GradCase{Op: op, Name: fmt.Sprintf("%s/%d", op, i), Inputs: c.inputs, Positive: c.positive, F: c.f,
				HostOnly: op == "ScalarLoss"})
		}
	}
	return out
}

// GradStep is the relative finite-difference step of an op (see the gradient mode above).
func GradStep(op string) float64 {
	switch op {
	case "Exp", "Log", "Sqrt", "Tanh", "Sin", "Softplus", "Sigmoid", "SiLU", "Div", "GroupNorm", "GroupNormSiLU", "GroupNormSiLUDropout", "Softmax", "Attention":
		return 0.1
	case "Max":
		return 1e-2
	}
	return 1 // polynomial of degree ≤ 6 in each input
}

// GradTol is the allowed error of an analytic gradient component relative to the larger of |fd|
// and a tenth of the input's largest gradient component: a 0.1 % error of a whole backward rule
// exceeds it by a factor 5 on the largest component. The worst case of the CPU and the reference
// uses 0.56 of it (GroupNorm, float32 sums); scripts/mutations.py shows a 0.1 % change of one term
// of each rule fails.
const GradTol = 2e-4

// GradResult is the outcome of one gradient case on a device.
type GradResult struct {
	GradCase
	// Worst is the largest error over every input's components as a fraction of what GradTol allows
	// (≤ 1 passes); Detail describes that component.
	Worst  float64
	Detail string
	Err    error // the device's error, or a missing gradient
}

// RunGrad runs c's forward and backward passes on dev with the projection weights as the output's
// gradient, and compares every input's gradient with the finite differences of the forward pass
// on fdDev (tensor.Reference, or tensor.CPU for a HostOnly case).
func RunGrad(dev, fdDev tensor.Device, c GradCase) GradResult {
	res := GradResult{GradCase: c}
	src := rng.New(11)
	inputs := make([]*tensor.Tensor, len(c.Inputs))
	for i, sh := range c.Inputs {
		inputs[i] = tensor.RandN(src, sh...)
		if c.Positive && i == len(c.Inputs)-1 {
			for j, v := range inputs[i].Data() {
				inputs[i].Data()[j] = float32(math.Abs(float64(v))) + 0.5
			}
		}
	}
	var w []float64
	project := func() (float64, error) { // float64-accurate forward, Σ w·y in float64
		g := autograd.NewTape(fdDev)
		g.SetNoGrad(true)
		vs := make([]*autograd.Value, len(inputs))
		for i, x := range inputs {
			d, err := x.ToDevice(fdDev)
			if err != nil {
				return 0, err
			}
			vs[i] = g.Const(d)
		}
		y, err := c.F(g, vs).T.ToHost()
		if err != nil {
			return 0, err
		}
		if w == nil {
			w = make([]float64, y.Len())
			for i := range w {
				w[i] = src.Normal()
			}
		}
		var s float64
		for i, v := range y.Data() {
			s += w[i] * float64(v)
		}
		return s, nil
	}
	if _, err := project(); err != nil {
		res.Err = fmt.Errorf("finite differences on %s: %w", fdDev.Name(), err)
		return res
	}

	g := autograd.NewTape(dev)
	vs := make([]*autograd.Value, len(inputs))
	for i, x := range inputs {
		d, err := x.ToDevice(dev)
		if err != nil {
			res.Err = err
			return res
		}
		vs[i] = g.Var(d)
	}
	y := c.F(g, vs)
	seed := tensor.Zeros(y.Shape()...)
	for i := range w {
		seed.Data()[i] = float32(w[i])
	}
	var err error
	if y.Grad, err = seed.ToDevice(dev); err != nil {
		res.Err = err
		return res
	}
	g.BackwardFrom(y)

	// central is D(h) for element j of input x, with the step actually taken after rounding x ± h
	// to float32.
	central := func(x *tensor.Tensor, j int, h float64) (float64, error) {
		orig := x.Data()[j]
		x.Data()[j] = float32(float64(orig) + h)
		hp := float64(x.Data()[j]) - float64(orig)
		fp, err := project()
		x.Data()[j] = float32(float64(orig) - h)
		hm := float64(orig) - float64(x.Data()[j])
		fm, err2 := project()
		x.Data()[j] = orig
		return (fp - fm) / (hp + hm), errors.Join(err, err2)
	}
	step := GradStep(c.Op)
	for i, x := range inputs {
		if vs[i].Grad == nil {
			res.Err = fmt.Errorf("input %d received no gradient", i)
			return res
		}
		gh, err := vs[i].Grad.ToHost()
		if err != nil {
			res.Err = fmt.Errorf("input %d's gradient: %w", i, err)
			return res
		}
		ana := gh.Data()
		fd := make([]float64, len(ana))
		var big float64
		for j := range fd {
			h := step * max(1, math.Abs(float64(x.Data()[j])))
			var d [3]float64
			for k, hk := range []float64{h / 4, h / 2, h} {
				if d[k], err = central(x, j, hk); err != nil {
					res.Err = fmt.Errorf("finite differences on %s: %w", fdDev.Name(), err)
					return res
				}
			}
			fd[j] = (64*d[0] - 20*d[1] + d[2]) / 45
			big = max(big, math.Abs(fd[j]))
		}
		for j := range fd {
			e := math.Abs(float64(ana[j])-fd[j]) / (GradTol * max(math.Abs(fd[j]), 0.1*big, 1e-3))
			if !(e <= res.Worst) { // NaN counts as the worst
				res.Worst = e
				res.Detail = fmt.Sprintf("input %d element %d: analytic %.8g, finite difference %.8g", i, j, ana[j], fd[j])
			}
		}
	}
	return res
}

// CheckGrad runs every gradient case on dev (the HostOnly ones only on the CPU) and reports each
// one that fails or exceeds GradTol; label names the configuration in messages.
func CheckGrad(t T, dev tensor.Device, label string) {
	t.Helper()
	for _, r := range GradMatrix(dev) {
		switch {
		case r.Err != nil:
			t.Errorf("gradient %s on %s (%s): %v", r.Name, dev.Name(), label, r.Err)
		case !(r.Worst <= 1):
			t.Errorf("gradient %s on %s (%s): %.3g × the tolerance at %s", r.Name, dev.Name(), label, r.Worst, r.Detail)
		}
	}
}

// GradMatrix runs every gradient case that can run on dev.
func GradMatrix(dev tensor.Device) []GradResult {
	var out []GradResult
	for _, c := range GradCases() {
		fd := tensor.Reference
		if c.HostOnly {
			if dev != tensor.CPU {
				continue
			}
			fd = tensor.CPU
		}
		out = append(out, RunGrad(dev, fd, c))
	}
	return out
}
