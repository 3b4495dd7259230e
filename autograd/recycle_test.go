package autograd_test

import (
	"math"
	"testing"

	"holdgo/autograd"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// TestRecycleEveryOp runs every gradient case with its inputs and its output
// passed through a recorded MulScalar(·, 1) (exact, so the values are those of
// the plain case), which makes them intermediate values the sweep may
// recycle. The input gradients must be bit-identical with recycling off, on,
// and poisoning: an op whose closure reads a tensor it did not save reads NaN
// (poison) or another tensor's values (on).
func TestRecycleEveryOp(t *testing.T) {
	for _, c := range optest.GradCases() {
		t.Run(c.Name, func(t *testing.T) {
			want := recycledGrads(c, autograd.RecycleOff)
			for _, mode := range []autograd.Recycle{autograd.RecycleOn, autograd.RecyclePoison} {
				got := recycledGrads(c, mode)
				for i := range want {
					for j := range want[i] {
						if math.Float32bits(got[i][j]) != math.Float32bits(want[i][j]) {
							t.Fatalf("mode %d: input %d element %d: %v, without recycling %v", mode, i, j, got[i][j], want[i][j])
						}
					}
				}
			}
		})
	}
}

func recycledGrads(c optest.GradCase, mode autograd.Recycle) [][]float32 {
	rng := tensor.NewRNG(11)
	g := autograd.NewTape(tensor.CPU)
	g.SetRecycle(mode)
	leaves := make([]*autograd.Value, len(c.Inputs))
	mids := make([]*autograd.Value, len(c.Inputs))
	for i, sh := range c.Inputs {
		x := tensor.RandN(rng, sh...)
		if c.Positive {
			for j, v := range x.Data() {
				x.Data()[j] = float32(math.Abs(float64(v))) + 0.5
			}
		}
		leaves[i] = g.Var(x)
		mids[i] = g.MulScalar(leaves[i], 1)
	}
	out := g.MulScalar(c.F(g, mids), 1)
	out.Grad = tensor.RandN(rng, out.Shape()...)
	g.BackwardFrom(out)
	grads := make([][]float32, len(leaves))
	for i, v := range leaves {
		grads[i] = v.Grad.Data()
	}
	return grads
}

// TestRecycleKeepsWhatCallerOwns checks what stays valid after a recycling
// sweep: the leaves with their gradients and the output; intermediate
// gradients are dropped, and a second sweep is refused. With autograd.RecyclePoison
// anything freed that the caller still holds reads NaN.
func TestRecycleKeepsWhatCallerOwns(t *testing.T) {
	for _, mode := range []autograd.Recycle{autograd.RecycleOn, autograd.RecyclePoison} {
		g := autograd.NewTape(tensor.CPU)
		g.SetRecycle(mode)
		x := g.Var(tensor.FromSlice([]float32{1, 2}, 2))
		mid := g.Exp(x)
		y := g.Sum(g.Square(mid))
		g.Backward(y)
		// !(err ≤ tol): a NaN (poisoned storage) fails too.
		if got := x.Grad.Data(); !(math.Abs(float64(got[0])-2*math.Exp(2)) <= 1e-4) || !(math.Abs(float64(got[1])-2*math.Exp(4)) <= 1e-3) {
			t.Fatalf("mode %d: gradient %v, want 2·exp(2x)", mode, got)
		}
		if got, want := y.T.Item(), float32(math.Exp(2)+math.Exp(4)); !(math.Abs(float64(got-want)) <= 1e-3) {
			t.Fatalf("mode %d: output %v after the sweep, want %v", mode, got, want)
		}
		if x.T.Data()[1] != 2 || mid.Grad != nil {
			t.Fatalf("mode %d: leaf %v, intermediate gradient %v", mode, x.T, mid.Grad)
		}
		func() {
			defer func() {
				if recover() == nil {
					t.Fatalf("mode %d: a second sweep over a recycled tape did not panic", mode)
				}
			}()
			g.Backward(y)
		}()
	}
}
