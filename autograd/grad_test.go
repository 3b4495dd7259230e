package autograd

import (
	"fmt"
	"math"
	"testing"

	"holdgo/tensor"
)

type gradCase struct {
	inputs   [][]int
	positive bool // inputs drawn away from zero (Log, Sqrt, Div's divisor)
	f        func(g *Tape, in []*Value) *Value
}

func unaryGC(f func(g *Tape, x *Value) *Value, positive bool) []gradCase {
	var cs []gradCase
	for _, sh := range [][]int{{1}, {7}, {3, 1, 5}} {
		cs = append(cs, gradCase{[][]int{sh}, positive, func(g *Tape, in []*Value) *Value { return f(g, in[0]) }})
	}
	return cs
}

func binaryGC(f func(g *Tape, a, b *Value) *Value) []gradCase {
	var cs []gradCase
	for _, p := range [][2][]int{{{4, 3}, {4, 3}}, {{4, 3}, {3}}, {{1, 3}, {5, 1}}, {{2, 1, 3}, {1, 4, 1}}, {{1}, {1}}} {
		cs = append(cs, gradCase{[][]int{p[0], p[1]}, true, func(g *Tape, in []*Value) *Value { return f(g, in[0], in[1]) }})
	}
	return cs
}

func matGC(a, b []int, ta, tb bool) gradCase {
	return gradCase{[][]int{a, b}, false, func(g *Tape, in []*Value) *Value { return g.MatMul(in[0], in[1], ta, tb) }}
}

// gradCases has a case list for every name in Differentiable.
var gradCases = map[string][]gradCase{
	"Neg":       unaryGC((*Tape).Neg, false),
	"AddScaled": binaryGC(func(g *Tape, a, b *Value) *Value { return g.AddScaled(a, b, 0.7) }),
	"Exp":       unaryGC((*Tape).Exp, false),
	"Log":       unaryGC((*Tape).Log, true),
	"Sqrt":      unaryGC((*Tape).Sqrt, true),
	"Square":    unaryGC((*Tape).Square, false),
	"Tanh":      unaryGC((*Tape).Tanh, false),
	"Sin":       unaryGC((*Tape).Sin, false),
	"Sigmoid":   unaryGC((*Tape).Sigmoid, false),
	"SiLU":      unaryGC((*Tape).SiLU, false),
	"AddScalar": unaryGC(func(g *Tape, x *Value) *Value { return g.AddScalar(x, 0.75) }, false),
	"MulScalar": unaryGC(func(g *Tape, x *Value) *Value { return g.MulScalar(x, -1.5) }, false),
	"Add":       binaryGC((*Tape).Add),
	"Sub":       binaryGC((*Tape).Sub),
	"Mul":       binaryGC((*Tape).Mul),
	"Div":       binaryGC((*Tape).Div),
	"MatMul": {
		matGC([]int{3, 4}, []int{4, 5}, false, false), matGC([]int{4, 3}, []int{4, 5}, true, false),
		matGC([]int{3, 4}, []int{5, 4}, false, true), matGC([]int{4, 3}, []int{5, 4}, true, true),
		matGC([]int{2, 3, 1}, []int{2, 1, 5}, false, false), matGC([]int{2, 3, 4}, []int{4, 5}, false, false),
		matGC([]int{2, 4, 3}, []int{5, 4}, true, true), matGC([]int{4, 5}, []int{3, 5, 2}, false, false),
	},
	"Linear": {
		{[][]int{{5, 3}, {4, 3}, {4}}, false, func(g *Tape, in []*Value) *Value { return g.Linear(in[0], in[1], in[2]) }},
		{[][]int{{2, 3, 1}, {1, 1}}, false, func(g *Tape, in []*Value) *Value { return g.Linear(in[0], in[1], nil) }},
	},
	"Sum": {
		{[][]int{{3, 5}}, false, func(g *Tape, in []*Value) *Value { return g.Sum(in[0]) }},
		{[][]int{{2, 3, 5}}, false, func(g *Tape, in []*Value) *Value { return g.Sum(in[0], 0, 2) }},
		{[][]int{{4, 1}}, false, func(g *Tape, in []*Value) *Value { return g.Sum(in[0], -1) }},
	},
	"Mean": {
		{[][]int{{3, 5}}, false, func(g *Tape, in []*Value) *Value { return g.Mean(in[0], 1) }},
		{[][]int{{2, 3, 5}}, false, func(g *Tape, in []*Value) *Value { return g.Mean(in[0]) }},
	},
	"Max": {
		{[][]int{{3, 5}}, false, func(g *Tape, in []*Value) *Value { return g.Max(in[0], 1) }},
		{[][]int{{2, 3, 5}}, false, func(g *Tape, in []*Value) *Value { return g.Max(in[0], 0, 2) }},
	},
	"Reshape": {{[][]int{{2, 6}}, false, func(g *Tape, in []*Value) *Value { return g.Square(g.Reshape(in[0], 3, -1)) }}},
	"Permute": {{[][]int{{2, 3, 4}}, false, func(g *Tape, in []*Value) *Value { return g.Permute(in[0], 2, 0, 1) }}},
	"Transpose": {
		{[][]int{{3, 5}}, false, func(g *Tape, in []*Value) *Value { return g.Transpose(in[0]) }},
		{[][]int{{2, 1, 3}}, false, func(g *Tape, in []*Value) *Value { return g.Transpose(in[0]) }},
	},
	"Concat": {
		{[][]int{{2, 3}, {1, 3}}, false, func(g *Tape, in []*Value) *Value { return g.Concat(0, in[0], in[1]) }},
		{[][]int{{4, 1}, {4, 6}}, false, func(g *Tape, in []*Value) *Value { return g.Concat(-1, in[0], in[1]) }},
	},
	"Slice": {{[][]int{{3, 7}}, false, func(g *Tape, in []*Value) *Value { return g.Slice(in[0], 1, 2, 5) }}},
	"Split": {{[][]int{{5, 4}}, false, func(g *Tape, in []*Value) *Value {
		p := g.Split(in[0], 0, 2, 3)
		return g.Mul(p[0], g.Slice(p[1], 0, 1, 3))
	}}},
	"Gather": {{[][]int{{4, 3}}, false, func(g *Tape, in []*Value) *Value { return g.Gather(in[0], []int{3, 0, 3, 1, 1}) }}},
	"ScalarLoss": {{[][]int{{3, 2}}, false, func(g *Tape, in []*Value) *Value {
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

// TestGradients checks every differentiable op against central finite
// differences. The projected loss Σ w·f(x) (fixed random w) is accumulated in
// float64; the forward pass is float32, so the step is large enough for its
// rounding to stay far below the tolerance.
func TestGradients(t *testing.T) {
	for _, name := range Differentiable {
		cases := gradCases[name]
		if len(cases) == 0 {
			t.Errorf("op %s has no gradient check", name)
		}
		for ci, c := range cases {
			t.Run(fmt.Sprintf("%s/%d", name, ci), func(t *testing.T) { checkGrad(t, c) })
		}
	}
	if len(gradCases) != len(Differentiable) {
		t.Errorf("gradCases has %d ops, Differentiable lists %d", len(gradCases), len(Differentiable))
	}
}

func checkGrad(t *testing.T, c gradCase) {
	rng := tensor.NewRNG(11)
	inputs := make([]*tensor.Tensor, len(c.inputs))
	for i, sh := range c.inputs {
		inputs[i] = tensor.RandN(rng, sh...)
		if c.positive && i == len(c.inputs)-1 || c.positive && len(c.inputs) == 1 {
			for j, v := range inputs[i].Data() {
				inputs[i].Data()[j] = float32(math.Abs(float64(v))) + 0.5
			}
		}
	}
	var w []float64
	project := func() float64 { // forward only, Σ w·y in float64
		g := NewTape(tensor.CPU)
		g.SetNoGrad(true)
		vs := make([]*Value, len(inputs))
		for i, x := range inputs {
			vs[i] = g.Const(x)
		}
		y := c.f(g, vs).T.Data()
		if w == nil {
			w = make([]float64, len(y))
			for i := range w {
				w[i] = rng.Normal()
			}
		}
		var s float64
		for i, v := range y {
			s += w[i] * float64(v)
		}
		return s
	}
	project()

	g := NewTape(tensor.CPU)
	vs := make([]*Value, len(inputs))
	for i, x := range inputs {
		vs[i] = g.Var(x)
	}
	y := c.f(g, vs)
	seed := tensor.Zeros(y.Shape()...)
	for i := range w {
		seed.Data()[i] = float32(w[i])
	}
	y.Grad = seed
	g.BackwardFrom(y)

	for i, x := range inputs {
		if vs[i].Grad == nil {
			t.Fatalf("input %d received no gradient", i)
		}
		ana := vs[i].Grad.Data()
		for j := range x.Data() {
			orig := x.Data()[j]
			h := 1e-2 * max(1, math.Abs(float64(orig)))
			x.Data()[j] = float32(float64(orig) + h)
			hp := float64(x.Data()[j]) - float64(orig)
			fp := project()
			x.Data()[j] = float32(float64(orig) - h)
			hm := float64(orig) - float64(x.Data()[j])
			fm := project()
			x.Data()[j] = orig
			fd := (fp - fm) / (hp + hm)
			if err := math.Abs(float64(ana[j]) - fd); !(err <= 1e-2*math.Abs(fd)+2e-3) {
				t.Errorf("input %d element %d: analytic %.6g, finite difference %.6g", i, j, ana[j], fd)
			}
		}
	}
}

// TestOpListCovered maps every tensor op to the differentiable op that uses
// it or to the backward-only role it plays, so a new tensor op must be
// classified (and, if differentiable, gradient-checked).
func TestOpListCovered(t *testing.T) {
	role := map[tensor.OpKind]string{
		tensor.OpFill: "backward seed", tensor.OpCopy: "SumTo without reduction", tensor.OpNeg: "Neg",
		tensor.OpExp: "Exp", tensor.OpLog: "Log", tensor.OpSqrt: "Sqrt", tensor.OpSquare: "Square",
		tensor.OpTanh: "Tanh", tensor.OpSigmoid: "Sigmoid", tensor.OpSiLU: "SiLU",
		tensor.OpAddScalar: "AddScalar", tensor.OpMulScalar: "MulScalar",
		tensor.OpSiLUGrad: "SiLU backward", tensor.OpTanhGrad: "Tanh backward", tensor.OpSigmoidGrad: "Sigmoid backward",
		tensor.OpAdd: "Add", tensor.OpSub: "Sub", tensor.OpMul: "Mul", tensor.OpDiv: "Div",
		tensor.OpEq: "Max backward", tensor.OpMatMul: "MatMul", tensor.OpSum: "Sum", tensor.OpMax: "Max",
		tensor.OpPermute: "Permute", tensor.OpConcat: "Concat", tensor.OpSlice: "Slice",
		tensor.OpSliceAdd: "Slice backward", tensor.OpGather: "Gather", tensor.OpScatterAdd: "Gather backward",
		tensor.OpConv2d: "Conv2d", tensor.OpConv2dGradInput: "Conv2d backward", tensor.OpConv2dGradWeight: "Conv2d backward",
		tensor.OpGroupNorm: "GroupNorm", tensor.OpGroupNormGrad: "GroupNorm backward", tensor.OpGroupNormParamGrad: "GroupNorm backward",
		tensor.OpSoftmax: "Softmax, Attention", tensor.OpSoftmaxGrad: "Softmax backward", tensor.OpUpFIRDn2d: "UpFIRDn2d",
		tensor.OpGroupNormSiLU: "GroupNormSiLU", tensor.OpGroupNormSiLUGrad: "GroupNormSiLU backward", tensor.OpSin: "Sin",
		tensor.OpDropout: "Dropout (forward and backward)",
	}
	// The fused families outside the tape: the training step's and the samplers' work, the time
	// embedding of constant times (tensor/fused.go).
	for _, k := range []tensor.OpKind{tensor.OpFillNormal, tensor.OpFourierEmbedding, tensor.OpPositionalEmbedding, tensor.OpAdam,
		tensor.OpEMA, tensor.OpSumSq, tensor.OpScoreLoss, tensor.OpPerturb, tensor.OpBlockAffine} {
		role[k] = "not differentiated: a fused op of train, sample or the time embedding"
	}
	for _, k := range tensor.Ops() {
		if role[k] == "" {
			t.Errorf("tensor op %v is neither differentiated nor used by a backward pass", k)
		}
	}
}

func TestNoGradRecordsNothing(t *testing.T) {
	g := NewTape(tensor.CPU)
	g.SetNoGrad(true)
	x := g.Var(tensor.RandN(tensor.NewRNG(1), 3, 3))
	g.Sum(g.SiLU(g.MatMul(x, x, false, false)))
	if g.Len() != 0 {
		t.Fatalf("no-grad tape recorded %d nodes", g.Len())
	}
}

func TestGradientsAccumulate(t *testing.T) {
	g := NewTape(tensor.CPU)
	x := g.Var(tensor.FromSlice([]float32{1, 2}, 2))
	y := g.Add(g.Sum(g.Square(x)), g.Sum(g.MulScalar(x, 3))) // d/dx = 2x + 3
	g.Backward(y)
	if got := x.Grad.Data(); got[0] != 5 || got[1] != 7 {
		t.Fatalf("gradient %v, want [5 7]", got)
	}
	if y.Op() != "Add" || y.Inputs()[0].Op() != "Sum" {
		t.Fatalf("op names %q, %q", y.Op(), y.Inputs()[0].Op())
	}
}
