// Package autograd is holdgo's reverse-mode tape. Each op computes its result
// with the tensor package and records a closure that adds (never assigns)
// into its inputs' gradients. Nodes are kept in creation order, which is a
// topological order, so Backward is one deterministic reverse sweep. All
// intermediate tensors come from one tensor.Pool and are recycled by Reset,
// so a warm training step allocates no tensor memory. The sweep also hands
// storage back to the pool as soon as no later closure reads it (recycle.go),
// which bounds a step's memory by what is live, not by all it ever made.
package autograd

import (
	"fmt"

	"holdgo/tensor"
)

// Value is a node of the tape: a tensor, its gradient, and how it was made.
type Value struct {
	T    *tensor.Tensor
	Grad *tensor.Tensor // nil until a gradient flows in (parameters bring their own)

	op        string
	inputs    []*Value
	backward  func(dy *tensor.Tensor)
	saved     []*tensor.Tensor // the forward tensors backward reads (see save)
	needsGrad bool
}

// Op names the op that produced v ("leaf" for inputs and parameters).
func (v *Value) Op() string { return v.op }

// Shape is the shape of v's tensor.
func (v *Value) Shape() []int { return v.T.Shape() }

// NeedsGrad reports whether gradients flow into v.
func (v *Value) NeedsGrad() bool { return v.needsGrad }

// Inputs are the values v was computed from.
func (v *Value) Inputs() []*Value { return v.inputs }

// Param wraps a parameter tensor and its gradient storage (typically views
// into the model's flat buffers). Backward adds into grad; zeroing it is the
// optimizer's job.
func Param(t, grad *tensor.Tensor) *Value {
	if !tensor.SameShape(t, grad) {
		panic(fmt.Sprintf("autograd: Param shape %v with gradient shape %v", t.Shape(), grad.Shape()))
	}
	return &Value{T: t, Grad: grad, op: "param", needsGrad: true}
}

// Tape records ops for one forward/backward pass.
type Tape struct {
	dev     tensor.Device
	nodes   []*Value
	pool    *tensor.Pool
	noGrad  bool
	recycle Recycle
	swept   bool      // a recycling sweep ran since the last Reset
	hook    *gradHook // OnGradDone's, for the next sweep
}

// NewTape returns an empty tape whose temporaries live on dev.
func NewTape(dev tensor.Device) *Tape { return &Tape{dev: dev, pool: tensor.NewPool(dev)} }

// Device is where the tape's temporaries live.
func (g *Tape) Device() tensor.Device { return g.dev }

// SetNoGrad turns recording off (sampling, evaluation) or back on. With it
// off, ops only compute their results.
func (g *Tape) SetNoGrad(off bool) { g.noGrad = off }

// Reset forgets every recorded node and recycles all temporaries: values
// made since the last Reset must not be used afterwards.
func (g *Tape) Reset() {
	clear(g.nodes)
	g.nodes = g.nodes[:0]
	g.pool.Release()
	g.swept = false
	g.hook = nil
}

// Len is the number of recorded nodes.
func (g *Tape) Len() int { return len(g.nodes) }

// Const wraps t as a leaf that takes no gradient.
func (g *Tape) Const(t *tensor.Tensor) *Value { return &Value{T: t, op: "const"} }

// Var wraps t as a leaf whose gradient is accumulated in tape memory.
func (g *Tape) Var(t *tensor.Tensor) *Value { return &Value{T: t, op: "var", needsGrad: true} }

// Temp returns a tensor of the tape's pool on its device (contents undefined),
// valid until Reset: for inputs a layer computes outside the tape.
func (g *Tape) Temp(shape ...int) *tensor.Tensor { return g.tmp(shape...) }

// tmp returns a pooled tensor (contents undefined).
func (g *Tape) tmp(shape ...int) *tensor.Tensor { return g.pool.Get(false, shape...) }

// record creates the node for result t of op over inputs; back receives the
// gradient of the result and adds into the inputs' gradients.
func (g *Tape) record(op string, t *tensor.Tensor, back func(dy *tensor.Tensor), inputs ...*Value) *Value {
	v := &Value{T: t, op: op}
	if g.noGrad {
		return v
	}
	for _, in := range inputs {
		if in.needsGrad {
			v.needsGrad = true
			break
		}
	}
	if v.needsGrad {
		v.inputs, v.backward = inputs, back
		g.nodes = append(g.nodes, v)
	}
	return v
}

// grad returns v's gradient tensor, allocating a zeroed one on first use: for
// the rules that add into part of it (SliceAdd, ScatterAdd, a broadcast sum),
// where the zeros of the rest are the gradient. A rule that writes the whole
// gradient takes gradDest instead, so that no clear precedes its write.
func (g *Tape) grad(v *Value) *tensor.Tensor {
	if v.Grad == nil {
		v.Grad = g.pool.Get(true, v.T.Shape()...)
	}
	return v.Grad
}

// gradDest returns v's gradient tensor and the factor its old contents must
// be kept with: a first gradient gets uninitialised storage and beta 0, so
// the caller writes instead of zero-filling and adding.
func (g *Tape) gradDest(v *Value) (*tensor.Tensor, float32) {
	if v.Grad == nil {
		v.Grad = g.pool.Get(false, v.T.Shape()...)
		return v.Grad, 0
	}
	return v.Grad, 1
}

// accum adds d into v's gradient, summing over broadcast dimensions if d has
// the shape of a broadcast of v.
func (g *Tape) accum(v *Value, d *tensor.Tensor) {
	if !v.needsGrad {
		return
	}
	gv, beta := g.gradDest(v)
	switch {
	case beta == 0 && tensor.SameShape(gv, d):
		tensor.Copy(gv, d)
	case beta == 0:
		tensor.SumTo(gv, d, gv.Shape())
	case tensor.SameShape(gv, d):
		tensor.Add(gv, gv, d)
	default:
		tensor.Add(gv, gv, tensor.SumTo(g.tmp(gv.Shape()...), d, gv.Shape()))
	}
}

// Backward seeds the gradient of the one-element value loss with 1 and runs
// the recorded closures in reverse order.
func (g *Tape) Backward(loss *Value) {
	if loss.T.Len() != 1 {
		panic(fmt.Sprintf("autograd: Backward from a value of shape %v; reduce it to one element first", loss.Shape()))
	}
	if !loss.needsGrad {
		return
	}
	seed, _ := g.gradDest(loss) // Fill overwrites: no clear needed
	tensor.Fill(seed, 1)
	g.BackwardFrom(loss)
}

// BackwardFrom runs the reverse sweep from out, whose Grad has been set by
// the caller (vector-Jacobian products). Unless recycling is off
// (SetRecycle), the sweep recycles intermediate storage as it goes: afterwards
// only leaves (Const, Var, Param) with their gradients and out itself are
// valid (copy an intermediate value before the sweep to keep it), and the
// tape must be Reset before it sweeps again.
func (g *Tape) BackwardFrom(out *Value) {
	if g.swept {
		panic("autograd: a second backward sweep over a recycled tape; Reset it first or SetRecycle(RecycleOff)")
	}
	start := -1
	for i := len(g.nodes) - 1; i >= 0; i-- {
		if g.nodes[i] == out {
			start = i
			break
		}
	}
	if start < 0 {
		panic("autograd: BackwardFrom a value not recorded on this tape")
	}
	done := func(int) {}
	if h := g.hook; h != nil {
		g.hook = nil
		after, before := h.plan(g.nodes, start)
		for _, k := range before {
			h.done(k)
		}
		done = func(i int) {
			for _, k := range after[i] {
				h.done(k)
			}
		}
	}
	if g.recycle == RecycleOff {
		for i := start; i >= 0; i-- {
			if v := g.nodes[i]; v.Grad != nil {
				v.backward(v.Grad)
			}
			done(i)
		}
		return
	}
	g.swept = true
	dying := g.plan(start, out)
	for _, s := range dying[start+1] { // read by no closure of the sweep
		g.free(s)
	}
	for i := start; i >= 0; i-- {
		v := g.nodes[i]
		mark := g.pool.Mark()
		if v.Grad != nil {
			v.backward(v.Grad)
		}
		g.freeTemps(v, mark)
		if gv := v.Grad; v != out && gv != nil {
			v.Grad = nil
			g.free(gv)
		}
		for _, s := range dying[i] {
			g.free(s)
		}
		done(i)
	}
}
