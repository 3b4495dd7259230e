package autograd_test

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// TestFirstGradientOverwrites: a rule that writes a value's first gradient
// (beta 0: no clear before it, tape.go's gradDest) must neither read that
// memory nor leave any of it unwritten. Every gradient case runs on a tape
// whose pool holds NaN everywhere (a first pass on NaN inputs, then Reset, so
// each buffer of the second pass is a recycled NaN one); its input gradients
// must be bit-identical with those of a fresh tape, whose new storage is zeros.
func TestFirstGradientOverwrites(t *testing.T) {
	for _, c := range optest.GradCases() {
		t.Run(c.Name, func(t *testing.T) {
			want := staleGrads(c, autograd.NewTape(tensor.CPU))
			g := autograd.NewTape(tensor.CPU)
			poisonPool(c, g)
			g.Reset()
			got := staleGrads(c, g)
			for i := range want {
				for j := range want[i] {
					if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
						t.Fatalf("input %d element %d: %v on recycled NaN memory, %v on fresh memory", i, j, got[i][j], want[i][j])
					}
				}
			}
		})
	}
}

// poisonPool runs case c forward and backward on g with every input, the
// seed and hence every temporary and gradient NaN.
func poisonPool(c optest.GradCase, g *autograd.Tape) {
	vs := make([]*autograd.Value, len(c.Inputs))
	for i, sh := range c.Inputs {
		vs[i] = g.Var(tensor.Fill(tensor.Zeros(sh...), float32(math.NaN())))
	}
	out := c.F(g, vs)
	out.Grad = tensor.Fill(g.Temp(out.Shape()...), float32(math.NaN()))
	g.BackwardFrom(out)
}

// staleGrads returns the input gradients of case c on g (inputs and seed of a
// fixed stream, positive where the case needs it).
func staleGrads(c optest.GradCase, g *autograd.Tape) [][]float32 {
	rng := tensor.NewRNG(5)
	vs := make([]*autograd.Value, len(c.Inputs))
	for i, sh := range c.Inputs {
		x := tensor.RandN(rng, sh...)
		if c.Positive {
			for j, v := range x.Data() {
				x.Data()[j] = float32(math.Abs(float64(v))) + 0.5
			}
		}
		vs[i] = g.Var(x)
	}
	out := c.F(g, vs)
	out.Grad = tensor.RandN(rng, out.Shape()...)
	g.BackwardFrom(out)
	grads := make([][]float32, len(vs))
	for i, v := range vs {
		grads[i] = v.Grad.Data()
	}
	return grads
}
