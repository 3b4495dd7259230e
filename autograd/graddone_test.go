package autograd_test

import (
	"slices"
	"testing"

	"holdgo/autograd"
	"holdgo/tensor"
)

// TestOnGradDone: the sweep reports each hooked parameter once, right after its
// last contribution (the gradient seen in the callback is the final one), in
// the order the sweep finishes them: a parameter no node reads first, then the
// one nearest the loss; a parameter used at both ends of the network last. With
// recycling on and off alike.
func TestOnGradDone(t *testing.T) {
	for _, mode := range []autograd.Recycle{autograd.RecycleOn, autograd.RecycleOff} {
		rng := tensor.NewRNG(3)
		param := func() *autograd.Value {
			return autograd.Param(tensor.RandN(rng, 3, 3), tensor.Zeros(3, 3))
		}
		shared, w1, w2, unused := param(), param(), param(), param()
		g := autograd.NewTape(tensor.CPU)
		g.SetRecycle(mode)
		x := g.Const(tensor.RandN(rng, 2, 3))
		h := g.Tanh(g.MatMul(g.MatMul(x, shared, false, false), w1, false, false))
		y := g.MatMul(g.MatMul(h, w2, false, false), shared, false, true)
		loss := g.Sum(g.Square(y))
		vals := []*autograd.Value{shared, w1, w2, unused}
		var order []int
		seen := make([][]float32, len(vals))
		g.OnGradDone(vals, func(k int) {
			order = append(order, k)
			seen[k] = slices.Clone(vals[k].Grad.Data())
		})
		g.Backward(loss)
		if want := []int{3, 2, 1, 0}; !slices.Equal(order, want) {
			t.Errorf("mode %d: finished %v, want %v", mode, order, want)
		}
		for k, v := range vals {
			if !slices.Equal(seen[k], v.Grad.Data()) {
				t.Errorf("mode %d: parameter %d reported before its gradient was final: %v, then %v", mode, k, seen[k], v.Grad.Data())
			}
		}
		// The hook holds for one sweep.
		g.Reset()
		order = nil
		g.Backward(g.Sum(g.MatMul(x, shared, false, false)))
		if len(order) != 0 {
			t.Errorf("mode %d: a second sweep called the hook: %v", mode, order)
		}
	}
}
