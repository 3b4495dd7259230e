package autograd

import (
	"fmt"
	"math"
	"testing"

	"holdgo/tensor"
)

// TestGradientsTight checks every backward rule tightly enough to catch a
// 0.1 % change of it (a term multiplied by 1.001), which TestGradients'
// 1e-2 relative tolerance lets through.
//
// The finite differences run the forward pass on tensor.Reference, whose
// kernels evaluate every op in float64 and round only the output to float32,
// and project the output onto fixed random weights in float64. The central
// difference D(h) = (f(x+h) − f(x−h)) / 2h = f′ + h²f‴/3! + h⁴f⁽⁵⁾/5! + …
// is Richardson-extrapolated from the steps h, h/2 and h/4,
//
//	D = (64·D(h/4) − 20·D(h/2) + D(h)) / 45,
//
// which cancels the h² and h⁴ terms. The remaining error is the float32
// output rounding divided by the step, so the step is as large as the op
// allows (tightStep): ops that are polynomials of degree ≤ 6 in each input
// (linear, bilinear, quadratic) are differentiated exactly with any step and
// take h = 1; smooth ops take h = 0.1; Max, piecewise linear, takes a step
// below the gap between its entries. The analytic gradient is taken on both
// the Reference and the CPU device.
func TestGradientsTight(t *testing.T) {
	for _, dev := range []tensor.Device{tensor.Reference, tensor.CPU} {
		for _, name := range Differentiable {
			fdDev := tensor.Reference
			if name == "ScalarLoss" { // its test loss is host code: value and gradient on the host
				if dev != tensor.CPU {
					continue
				}
				fdDev = tensor.CPU
			}
			for ci, c := range gradCases[name] {
				t.Run(fmt.Sprintf("%s/%s/%d", dev.Name(), name, ci), func(t *testing.T) { checkGradTight(t, dev, fdDev, c, tightStep(name)) })
			}
		}
	}
}

// tightStep is the relative finite-difference step of each op (see above).
func tightStep(name string) float64 {
	switch name {
	case "Exp", "Log", "Sqrt", "Tanh", "Sin", "Sigmoid", "SiLU", "Div", "GroupNorm", "GroupNormSiLU", "Softmax", "Attention":
		return 0.1
	case "Max":
		return 1e-2
	}
	return 1 // polynomial of degree ≤ 6 in each input
}

// tightTol is the allowed error relative to the larger of |fd| and a tenth of
// the input's largest gradient component: a 0.1 % error of a whole backward
// rule exceeds it by a factor 5 on the largest component. The worst case
// of the unmutated code uses 0.56 of it (CPU GroupNorm, float32 sums);
// scripts/mutations.py shows a 0.1 % change of one term of each rule fails.
const tightTol = 2e-4

func checkGradTight(t *testing.T, dev, fdDev tensor.Device, c gradCase, step float64) {
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
	project := func() float64 { // float64-accurate forward, Σ w·y in float64
		g := NewTape(fdDev)
		g.SetNoGrad(true)
		vs := make([]*Value, len(inputs))
		for i, x := range inputs {
			vs[i] = g.Const(onDevice(t, x, fdDev))
		}
		y := hostData(t, c.f(g, vs).T)
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

	g := NewTape(dev)
	vs := make([]*Value, len(inputs))
	for i, x := range inputs {
		vs[i] = g.Var(onDevice(t, x, dev))
	}
	y := c.f(g, vs)
	seed := tensor.Zeros(y.Shape()...)
	for i := range w {
		seed.Data()[i] = float32(w[i])
	}
	y.Grad = onDevice(t, seed, dev)
	g.BackwardFrom(y)

	// central is D(h) for element j of input x, with the step actually taken
	// after rounding x ± h to float32.
	central := func(x *tensor.Tensor, j int, h float64) float64 {
		orig := x.Data()[j]
		x.Data()[j] = float32(float64(orig) + h)
		hp := float64(x.Data()[j]) - float64(orig)
		fp := project()
		x.Data()[j] = float32(float64(orig) - h)
		hm := float64(orig) - float64(x.Data()[j])
		fm := project()
		x.Data()[j] = orig
		return (fp - fm) / (hp + hm)
	}
	for i, x := range inputs {
		if vs[i].Grad == nil {
			t.Fatalf("input %d received no gradient", i)
		}
		ana := hostData(t, vs[i].Grad)
		fd := make([]float64, len(ana))
		var big float64
		for j := range fd {
			h := step * max(1, math.Abs(float64(x.Data()[j])))
			fd[j] = (64*central(x, j, h/4) - 20*central(x, j, h/2) + central(x, j, h)) / 45
			big = max(big, math.Abs(fd[j]))
		}
		for j := range fd {
			if err := math.Abs(float64(ana[j]) - fd[j]); !(err <= tightTol*max(math.Abs(fd[j]), 0.1*big, 1e-3)) {
				t.Errorf("input %d element %d: analytic %.8g, finite difference %.8g (relative error %.2g)",
					i, j, ana[j], fd[j], err/max(math.Abs(fd[j]), 1e-300))
			}
		}
	}
}

func onDevice(t *testing.T, x *tensor.Tensor, dev tensor.Device) *tensor.Tensor {
	t.Helper()
	y, err := x.ToDevice(dev)
	if err != nil {
		t.Fatal(err)
	}
	return y
}

func hostData(t *testing.T, x *tensor.Tensor) []float32 {
	t.Helper()
	y, err := x.ToHost()
	if err != nil {
		t.Fatal(err)
	}
	return y.Data()
}
