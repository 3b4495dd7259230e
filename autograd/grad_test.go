package autograd_test

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// TestGradients checks every differentiable op against central finite
// differences. The projected loss Σ w·f(x) (fixed random w) is accumulated in
// float64; the forward pass is float32, so the step is large enough for its
// rounding to stay far below the tolerance.
func TestGradients(t *testing.T) {
	for _, c := range optest.GradCases() {
		t.Run(c.Name, func(t *testing.T) { checkGrad(t, c) })
	}
}

func checkGrad(t *testing.T, c optest.GradCase) {
	rng := tensor.NewRNG(11)
	inputs := make([]*tensor.Tensor, len(c.Inputs))
	for i, sh := range c.Inputs {
		inputs[i] = tensor.RandN(rng, sh...)
		if c.Positive && i == len(c.Inputs)-1 || c.Positive && len(c.Inputs) == 1 {
			for j, v := range inputs[i].Data() {
				inputs[i].Data()[j] = float32(math.Abs(float64(v))) + 0.5
			}
		}
	}
	var w []float64
	project := func() float64 { // forward only, Σ w·y in float64
		g := autograd.NewTape(tensor.CPU)
		g.SetNoGrad(true)
		vs := make([]*autograd.Value, len(inputs))
		for i, x := range inputs {
			vs[i] = g.Const(x)
		}
		y := c.F(g, vs).T.Data()
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

	g := autograd.NewTape(tensor.CPU)
	vs := make([]*autograd.Value, len(inputs))
	for i, x := range inputs {
		vs[i] = g.Var(x)
	}
	y := c.F(g, vs)
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
		tensor.OpGroupNorm: "GroupNorm", tensor.OpGroupNormBackward: "GroupNorm backward",
		tensor.OpSoftmax: "Softmax, Attention", tensor.OpSoftmaxGrad: "Softmax backward", tensor.OpUpFIRDn2d: "UpFIRDn2d",
		tensor.OpGroupNormSiLU: "GroupNormSiLU", tensor.OpGroupNormSiLUBackward: "GroupNormSiLU backward", tensor.OpSin: "Sin",
		tensor.OpDropout: "Dropout (forward and backward)", tensor.OpGroupNormSiLUDropoutBackward: "GroupNormSiLUDropout backward",
	}
	// The fused families outside the tape: the training step's and the samplers' work, the time
	// embedding of constant times (tensor/fused.go).
	for _, k := range []tensor.OpKind{tensor.OpFillNormal, tensor.OpFourierEmbedding, tensor.OpPositionalEmbedding, tensor.OpAdam,
		tensor.OpEMA, tensor.OpSumSq, tensor.OpScoreLoss, tensor.OpPerturb, tensor.OpBlockAffine} {
		role[k] = "not differentiated: a fused op of train, sample or the time embedding"
	}
	// An op the tape differentiates under its own name is covered by that name's gradient cases
	// (optest.GradCases has one list per name of autograd.Differentiable).
	for _, name := range autograd.Differentiable {
		for _, k := range tensor.Ops() {
			if k.String() == name && role[k] == "" {
				role[k] = name
			}
		}
	}
	for _, k := range tensor.Ops() {
		if role[k] == "" {
			t.Errorf("tensor op %v is neither differentiated nor used by a backward pass", k)
		}
	}
}

func TestNoGradRecordsNothing(t *testing.T) {
	g := autograd.NewTape(tensor.CPU)
	g.SetNoGrad(true)
	x := g.Var(tensor.RandN(tensor.NewRNG(1), 3, 3))
	g.Sum(g.SiLU(g.MatMul(x, x, false, false)))
	if g.Len() != 0 {
		t.Fatalf("no-grad tape recorded %d nodes", g.Len())
	}
}

func TestGradientsAccumulate(t *testing.T) {
	g := autograd.NewTape(tensor.CPU)
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
