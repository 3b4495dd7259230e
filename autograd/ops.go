package autograd

import (
	"math"
	"slices"

	"holdgo/tensor"
)

// Differentiable lists every op the tape differentiates; the gradient-check
// test enumerates it and fails for an op without a case.
var Differentiable = []string{
	"Neg", "Exp", "Log", "Sqrt", "Square", "Tanh", "Sigmoid", "SiLU", "AddScalar", "MulScalar",
	"Add", "AddScaled", "Sub", "Mul", "Div", "MatMul", "Linear", "Sum", "Mean", "Max",
	"Reshape", "Permute", "Transpose", "Concat", "Slice", "Split", "Gather", "ScalarLoss",
	"Conv2d", "Conv2dResidual", "GroupNorm", "GroupNormSiLU", "GroupNormSiLUDropout", "Softmax", "Attention", "UpFIRDn2d", "Dropout", // conv.go, attention.go
	"Sin", "Softplus",
}

// unary records an element-wise op whose backward computes dx from
// (x, y, dy) into a pooled tensor; saved lists which of x and y dx reads.
func (g *Tape) unary(name string, x *Value, y *tensor.Tensor, dx func(out, x, y, dy *tensor.Tensor), saved ...*tensor.Tensor) *Value {
	var v *Value
	v = g.record(name, y, func(dy *tensor.Tensor) {
		if !x.needsGrad {
			return
		}
		if x.Grad == nil { // first gradient: write it in place, no copy
			gx, _ := g.gradDest(x)
			dx(gx, x.T, v.T, dy)
			return
		}
		d := g.tmp(x.Shape()...)
		dx(d, x.T, v.T, dy)
		g.accum(x, d)
	}, x).save(saved...)
	return v
}

func (g *Tape) out(shape ...int) *tensor.Tensor { return g.tmp(shape...) }

// Neg returns -x.
func (g *Tape) Neg(x *Value) *Value {
	return g.unary("Neg", x, tensor.Neg(g.out(x.Shape()...), x.T), func(d, _, _, dy *tensor.Tensor) { tensor.Neg(d, dy) })
}

// Exp returns exp(x).
func (g *Tape) Exp(x *Value) *Value {
	y := tensor.Exp(g.out(x.Shape()...), x.T)
	return g.unary("Exp", x, y, func(d, _, y, dy *tensor.Tensor) { tensor.Mul(d, dy, y) }, y)
}

// Log returns log(x).
func (g *Tape) Log(x *Value) *Value {
	return g.unary("Log", x, tensor.Log(g.out(x.Shape()...), x.T), func(d, x, _, dy *tensor.Tensor) { tensor.Div(d, dy, x) }, x.T)
}

// Sqrt returns sqrt(x).
func (g *Tape) Sqrt(x *Value) *Value {
	y := tensor.Sqrt(g.out(x.Shape()...), x.T)
	return g.unary("Sqrt", x, y, func(d, _, y, dy *tensor.Tensor) {
		tensor.MulScalar(d, tensor.Div(d, dy, y), 0.5)
	}, y)
}

// Square returns x².
func (g *Tape) Square(x *Value) *Value {
	return g.unary("Square", x, tensor.Square(g.out(x.Shape()...), x.T), func(d, x, _, dy *tensor.Tensor) {
		tensor.MulScalar(d, tensor.Mul(d, dy, x), 2)
	}, x.T)
}

// Tanh returns tanh(x).
func (g *Tape) Tanh(x *Value) *Value {
	y := tensor.Tanh(g.out(x.Shape()...), x.T)
	return g.unary("Tanh", x, y, func(d, _, y, dy *tensor.Tensor) { tensor.TanhGrad(d, y, dy) }, y)
}

// Sin returns sin(x). Its backward takes cos x as sin(x + π/2) (one op on
// every device); the float32 shift costs at most half an ulp of x, 4e-6 at
// the |x| ≈ 60 of Fourier features.
func (g *Tape) Sin(x *Value) *Value {
	return g.unary("Sin", x, tensor.Sin(g.out(x.Shape()...), x.T), func(d, x, _, dy *tensor.Tensor) {
		tensor.Sin(d, tensor.AddScalar(d, x, math.Pi/2))
		tensor.Mul(d, d, dy)
	}, x.T)
}

// Softplus returns log(1 + exp(x)); its backward is dy·sigmoid(x).
func (g *Tape) Softplus(x *Value) *Value {
	return g.unary("Softplus", x, tensor.Softplus(g.out(x.Shape()...), x.T), func(d, x, _, dy *tensor.Tensor) {
		tensor.Mul(d, tensor.Sigmoid(d, x), dy)
	}, x.T)
}

// Sigmoid returns 1/(1+exp(-x)).
func (g *Tape) Sigmoid(x *Value) *Value {
	y := tensor.Sigmoid(g.out(x.Shape()...), x.T)
	return g.unary("Sigmoid", x, y, func(d, _, y, dy *tensor.Tensor) { tensor.SigmoidGrad(d, y, dy) }, y)
}

// SiLU returns x·sigmoid(x).
func (g *Tape) SiLU(x *Value) *Value {
	return g.unary("SiLU", x, tensor.SiLU(g.out(x.Shape()...), x.T), func(d, x, _, dy *tensor.Tensor) { tensor.SiLUGrad(d, x, dy) }, x.T)
}

// AddScalar returns x + s.
func (g *Tape) AddScalar(x *Value, s float32) *Value {
	return g.record("AddScalar", tensor.AddScalar(g.out(x.Shape()...), x.T, s), func(dy *tensor.Tensor) { g.accum(x, dy) }, x)
}

// MulScalar returns x·s.
func (g *Tape) MulScalar(x *Value, s float32) *Value {
	return g.unary("MulScalar", x, tensor.MulScalar(g.out(x.Shape()...), x.T, s), func(d, _, _, dy *tensor.Tensor) {
		tensor.MulScalar(d, dy, s)
	})
}

func (g *Tape) bshape(a, b *Value) []int {
	s, err := tensor.BroadcastShape(a.Shape(), b.Shape())
	if err != nil {
		panic("autograd: " + err.Error())
	}
	return s
}

// Add returns a + b (broadcasting).
func (g *Tape) Add(a, b *Value) *Value {
	y := tensor.Add(g.out(g.bshape(a, b)...), a.T, b.T)
	return g.record("Add", y, func(dy *tensor.Tensor) { g.accum(a, dy); g.accum(b, dy) }, a, b)
}

// AddScaled returns (a + b)·s (broadcasting) as one node: a residual join and
// its scale (NCSN++'s 1/√2) without storing the sum.
func (g *Tape) AddScaled(a, b *Value, s float32) *Value {
	var y *tensor.Tensor
	if tensor.SameShape(a.T, b.T) { // one pass (tensor.AddScaled), the same bits
		y = tensor.AddScaled(g.out(a.Shape()...), a.T, b.T, s)
	} else {
		y = tensor.Add(g.out(g.bshape(a, b)...), a.T, b.T)
		tensor.MulScalar(y, y, s)
	}
	return g.record("AddScaled", y, func(dy *tensor.Tensor) {
		d := tensor.MulScalar(g.tmp(dy.Shape()...), dy, s)
		g.accum(a, d)
		g.accum(b, d)
	}, a, b)
}

// Sub returns a - b (broadcasting).
func (g *Tape) Sub(a, b *Value) *Value {
	y := tensor.Sub(g.out(g.bshape(a, b)...), a.T, b.T)
	return g.record("Sub", y, func(dy *tensor.Tensor) {
		g.accum(a, dy)
		if b.needsGrad {
			g.accum(b, tensor.Neg(g.tmp(dy.Shape()...), dy))
		}
	}, a, b)
}

// Mul returns a·b (broadcasting).
func (g *Tape) Mul(a, b *Value) *Value {
	y := tensor.Mul(g.out(g.bshape(a, b)...), a.T, b.T)
	return g.record("Mul", y, func(dy *tensor.Tensor) {
		if a.needsGrad {
			g.accum(a, tensor.Mul(g.tmp(dy.Shape()...), dy, b.T))
		}
		if b.needsGrad {
			g.accum(b, tensor.Mul(g.tmp(dy.Shape()...), dy, a.T))
		}
	}, a, b).save(a.T, b.T)
}

// Div returns a/b (broadcasting).
func (g *Tape) Div(a, b *Value) *Value {
	var v *Value
	v = g.record("Div", tensor.Div(g.out(g.bshape(a, b)...), a.T, b.T), func(dy *tensor.Tensor) {
		if a.needsGrad {
			g.accum(a, tensor.Div(g.tmp(dy.Shape()...), dy, b.T))
		}
		if b.needsGrad { // d(a/b)/db = -y/b
			d := tensor.Div(g.tmp(dy.Shape()...), tensor.Mul(g.tmp(dy.Shape()...), dy, v.T), b.T)
			g.accum(b, tensor.Neg(d, d))
		}
	}, a, b)
	v.save(b.T, v.T)
	return v
}

// MatMul returns op(a)·op(b), batched; a rank-2 operand may be shared
// across the other's batch.
func (g *Tape) MatMul(a, b *Value, transA, transB bool) *Value {
	shape, err := tensor.MatMulShape(a.Shape(), b.Shape(), transA, transB)
	if err != nil {
		panic("autograd: MatMul: " + err.Error())
	}
	y := tensor.MatMul(g.out(shape...), a.T, b.T, transA, transB)
	return g.record("MatMul", y, func(dy *tensor.Tensor) {
		// With A' = op(A), B' = op(B): dA' = dY·B'ᵀ and dB' = A'ᵀ·dY.
		if a.needsGrad {
			if transA { // dA = B'·dYᵀ
				g.matAcc(a, b.T, dy, transB, true)
			} else {
				g.matAcc(a, dy, b.T, false, !transB)
			}
		}
		if b.needsGrad {
			if transB { // dB = dYᵀ·A'
				g.matAcc(b, dy, a.T, true, transA)
			} else {
				g.matAcc(b, a.T, dy, !transA, false)
			}
		}
	}, a, b).save(a.T, b.T)
}

// matAcc adds op(x)·op(z) into v's gradient, summing over a batch that v
// (a shared rank-2 operand) does not have.
func (g *Tape) matAcc(v *Value, x, z *tensor.Tensor, tx, tz bool) {
	shape, err := tensor.MatMulShape(x.Shape(), z.Shape(), tx, tz)
	if err != nil {
		panic("autograd: MatMul backward: " + err.Error())
	}
	if slices.Equal(shape, v.Shape()) {
		gv, beta := g.gradDest(v)
		tensor.MatMulAcc(gv, x, z, tx, tz, beta)
		return
	}
	g.accum(v, tensor.MatMul(g.tmp(shape...), x, z, tx, tz))
}

// Linear returns x·Wᵀ + b for x (…, in), W (out, in), b (out) or nil: a
// fused node so that weight and bias gradients go straight into their
// buffers.
func (g *Tape) Linear(x, w, b *Value) *Value {
	in, outDim := w.Shape()[1], w.Shape()[0]
	x2 := x.T.Reshape(-1, in)
	rows := x2.Shape()[0]
	y := tensor.MatMul(g.out(rows, outDim), x2, w.T, false, true)
	if b != nil {
		tensor.Add(y, y, b.T)
	}
	yShape := append(slices.Clone(x.Shape()[:len(x.Shape())-1]), outDim)
	inputs := []*Value{x, w}
	if b != nil {
		inputs = append(inputs, b)
	}
	return g.record("Linear", y.Reshape(yShape...), func(dy *tensor.Tensor) {
		dy2 := dy.Reshape(rows, outDim)
		if x.needsGrad {
			gx, beta := g.gradDest(x)
			tensor.MatMulAcc(gx.Reshape(rows, in), dy2, w.T, false, false, beta)
		}
		if w.needsGrad {
			tensor.MatMulAcc(g.grad(w), dy2, x2, true, false, 1)
		}
		if b != nil && b.needsGrad {
			g.accum(b, tensor.Sum(g.tmp(1, outDim), dy2, 0).Reshape(outDim))
		}
	}, inputs...).save(x2, w.T)
}

// Sum sums x over axes (all if none), keeping them as size 1.
func (g *Tape) Sum(x *Value, axes ...int) *Value {
	y := tensor.Sum(g.out(tensor.ReduceShape(x.Shape(), axes...)...), x.T, axes...)
	return g.record("Sum", y, func(dy *tensor.Tensor) { g.broadcastAccum(x, dy, 1) }, x)
}

// broadcastAccum adds s·dy, broadcast to x's shape, into x's gradient.
func (g *Tape) broadcastAccum(x *Value, dy *tensor.Tensor, s float32) {
	if s != 1 {
		dy = tensor.MulScalar(g.tmp(dy.Shape()...), dy, s)
	}
	gx := g.grad(x)
	tensor.Add(gx, gx, dy)
}

// Mean averages x over axes (all if none), keeping them as size 1.
func (g *Tape) Mean(x *Value, axes ...int) *Value {
	y := tensor.Mean(g.out(tensor.ReduceShape(x.Shape(), axes...)...), x.T, axes...)
	scale := float32(y.Len()) / float32(max(x.T.Len(), 1))
	return g.record("Mean", y, func(dy *tensor.Tensor) { g.broadcastAccum(x, dy, scale) }, x)
}

// Max takes the maximum over axes (kept as size 1). Tied maxima each
// receive the full gradient.
func (g *Tape) Max(x *Value, axes ...int) *Value {
	var v *Value
	v = g.record("Max", tensor.Max(g.out(tensor.ReduceShape(x.Shape(), axes...)...), x.T, axes...), func(dy *tensor.Tensor) {
		mask := tensor.Eq(g.tmp(x.Shape()...), x.T, v.T)
		g.accum(x, tensor.Mul(mask, mask, dy))
	}, x)
	v.save(x.T, v.T)
	return v
}

// Reshape returns a view of x with a new shape.
func (g *Tape) Reshape(x *Value, shape ...int) *Value {
	y := x.T.Reshape(shape...)
	return g.record("Reshape", y, func(dy *tensor.Tensor) { g.accum(x, dy.Reshape(x.Shape()...)) }, x)
}

// Permute reorders axes: output dimension i is input dimension axes[i].
func (g *Tape) Permute(x *Value, axes ...int) *Value {
	r := len(axes)
	inv := make([]int, r)
	for i, a := range axes {
		inv[(a+r)%r] = i
	}
	y := tensor.Permute(g.out(permuted(x.Shape(), axes)...), x.T, axes...)
	return g.record("Permute", y, func(dy *tensor.Tensor) {
		g.accum(x, tensor.Permute(g.tmp(x.Shape()...), dy, inv...))
	}, x)
}

func permuted(shape, axes []int) []int {
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = shape[(a+len(shape))%len(shape)]
	}
	return out
}

// Transpose swaps the last two axes.
func (g *Tape) Transpose(x *Value) *Value {
	r := len(x.Shape())
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	axes[r-1], axes[r-2] = r-2, r-1
	v := g.Permute(x, axes...)
	v.op = "Transpose"
	return v
}

// Concat joins xs along axis.
func (g *Tape) Concat(axis int, xs ...*Value) *Value {
	ts := make([]*tensor.Tensor, len(xs))
	for i, x := range xs {
		ts[i] = x.T
	}
	shape := slices.Clone(xs[0].Shape())
	ax := (axis + len(shape)) % len(shape)
	shape[ax] = 0
	for _, x := range xs {
		shape[ax] += x.Shape()[ax]
	}
	y := tensor.Concat(g.out(shape...), axis, ts...)
	return g.record("Concat", y, func(dy *tensor.Tensor) {
		lo := 0
		for _, x := range xs {
			ax := (axis + len(x.Shape())) % len(x.Shape())
			n := x.Shape()[ax]
			if x.needsGrad {
				g.accum(x, tensor.Slice(g.tmp(x.Shape()...), dy, ax, lo, lo+n))
			}
			lo += n
		}
	}, xs...)
}

// Slice returns x[lo:hi] along axis.
func (g *Tape) Slice(x *Value, axis, lo, hi int) *Value {
	shape := slices.Clone(x.Shape())
	shape[(axis+len(shape))%len(shape)] = hi - lo
	y := tensor.Slice(g.out(shape...), x.T, axis, lo, hi)
	return g.record("Slice", y, func(dy *tensor.Tensor) { tensor.SliceAdd(g.grad(x), dy, axis, lo) }, x)
}

// Split cuts x along axis into pieces of the given sizes.
func (g *Tape) Split(x *Value, axis int, sizes ...int) []*Value {
	out := make([]*Value, len(sizes))
	lo := 0
	for i, s := range sizes {
		out[i] = g.Slice(x, axis, lo, lo+s)
		out[i].op = "Split"
		lo += s
	}
	return out
}

// Gather picks rows of x along axis 0.
func (g *Tape) Gather(x *Value, idx []int) *Value {
	shape := slices.Clone(x.Shape())
	shape[0] = len(idx)
	y := tensor.Gather(g.out(shape...), x.T, idx)
	return g.record("Gather", y, func(dy *tensor.Tensor) { tensor.ScatterAdd(g.grad(x), dy, idx) }, x)
}

// ScalarLoss records a loss computed outside the tape (for example by the
// hold package's fused objective): loss is its value, dx its gradient with
// respect to x. The result is a one-element value to call Backward on.
func (g *Tape) ScalarLoss(name string, x *Value, loss float32, dx *tensor.Tensor) *Value {
	if !tensor.SameShape(dx, x.T) {
		panic("autograd: ScalarLoss gradient shape differs from its input")
	}
	y := tensor.Fill(g.out(1), loss)
	v := g.record("ScalarLoss", y, func(dy *tensor.Tensor) {
		g.accum(x, tensor.MulScalar(g.tmp(dx.Shape()...), dx, dy.Item()))
	}, x)
	if name != "" {
		v.op = name
	}
	return v
}
