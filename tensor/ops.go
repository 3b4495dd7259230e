package tensor

import (
	"fmt"
	"slices"
)

// Every function here takes its destination first: nil allocates a new
// tensor on the operands' device, a non-nil destination must have the result
// shape. Element-wise ops allow the destination to alias an operand.

// Fill sets every element of out to v and returns out.
func Fill(out *Tensor, v float32) *Tensor {
	exec(Op{Kind: OpFill, Scalar: v}, out)
	return out
}

// Copy copies a into out (same element count; shapes may differ).
func Copy(out, a *Tensor) *Tensor {
	if out == nil {
		out = newOn(a.Device(), a.shape)
	} else if out.Len() != a.Len() {
		panic(fmt.Sprintf("tensor: Copy: %v into %v", a.shape, out.shape))
	}
	exec(Op{Kind: OpCopy}, out, a)
	return out
}

func unary(kind OpKind, s float32, out, a *Tensor) *Tensor {
	out = dest(out, a.shape, a, kind.String())
	exec(Op{Kind: kind, Scalar: s}, out, a)
	return out
}

// Neg returns -a.
func Neg(out, a *Tensor) *Tensor { return unary(OpNeg, 0, out, a) }

// Exp returns exp(a).
func Exp(out, a *Tensor) *Tensor { return unary(OpExp, 0, out, a) }

// Log returns log(a).
func Log(out, a *Tensor) *Tensor { return unary(OpLog, 0, out, a) }

// Sqrt returns sqrt(a).
func Sqrt(out, a *Tensor) *Tensor { return unary(OpSqrt, 0, out, a) }

// Square returns a².
func Square(out, a *Tensor) *Tensor { return unary(OpSquare, 0, out, a) }

// Tanh returns tanh(a).
func Tanh(out, a *Tensor) *Tensor { return unary(OpTanh, 0, out, a) }

// Sin returns sin(a) element-wise.
func Sin(out, a *Tensor) *Tensor { return unary(OpSin, 0, out, a) }

// Sigmoid returns 1/(1+exp(-a)).
func Sigmoid(out, a *Tensor) *Tensor { return unary(OpSigmoid, 0, out, a) }

// SiLU returns a·sigmoid(a).
func SiLU(out, a *Tensor) *Tensor { return unary(OpSiLU, 0, out, a) }

// Softplus returns log(1 + exp(a)), a smooth ReLU (its derivative is sigmoid(a)).
func Softplus(out, a *Tensor) *Tensor { return unary(OpSoftplus, 0, out, a) }

// AddScalar returns a + s.
func AddScalar(out, a *Tensor, s float32) *Tensor { return unary(OpAddScalar, s, out, a) }

// MulScalar returns a·s.
func MulScalar(out, a *Tensor, s float32) *Tensor { return unary(OpMulScalar, s, out, a) }

func pairwise(kind OpKind, out, a, b *Tensor) *Tensor {
	if !SameShape(a, b) {
		panic(fmt.Sprintf("tensor: %v: shapes %v and %v differ", kind, a.shape, b.shape))
	}
	out = dest(out, a.shape, a, kind.String())
	exec(Op{Kind: kind}, out, a, b)
	return out
}

// SiLUGrad returns dy·silu'(x).
func SiLUGrad(out, x, dy *Tensor) *Tensor { return pairwise(OpSiLUGrad, out, x, dy) }

// TanhGrad returns dy·(1-y²) for y = tanh(x).
func TanhGrad(out, y, dy *Tensor) *Tensor { return pairwise(OpTanhGrad, out, y, dy) }

// SigmoidGrad returns dy·y·(1-y) for y = sigmoid(x).
func SigmoidGrad(out, y, dy *Tensor) *Tensor { return pairwise(OpSigmoidGrad, out, y, dy) }

// Apply runs the element-wise op kind: a ClassUnary op on in[0] with scalar s, a ClassPair op on
// two inputs of one shape, a ClassBinary op on two inputs with broadcasting. It is the generic form
// of Neg, Exp, …, SiLUGrad, …, Add, …, by which the backend table (tensor/optest) runs every
// element-wise op of the list from its row in the op table (optable.go).
func Apply(kind OpKind, out *Tensor, s float32, in ...*Tensor) *Tensor {
	switch c := kind.Class(); {
	case c == ClassUnary && len(in) == 1:
		return unary(kind, s, out, in[0])
	case c == ClassPair && len(in) == 2:
		return pairwise(kind, out, in[0], in[1])
	case c == ClassBinary && len(in) == 2:
		return broadcastOp(kind, out, in[0], in[1])
	}
	panic(fmt.Sprintf("tensor: Apply: %v (class %v) with %d inputs is not an element-wise op", kind, kind.Class(), len(in)))
}

// BroadcastShape returns the NumPy broadcast of shapes a and b.
func BroadcastShape(a, b []int) ([]int, error) {
	r := max(len(a), len(b))
	out := make([]int, r)
	for i := range r {
		da, db := 1, 1
		if j := len(a) - r + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - r + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", a, b)
		}
	}
	return out, nil
}

func broadcastOp(kind OpKind, out, a, b *Tensor) *Tensor {
	shape, err := BroadcastShape(a.shape, b.shape)
	if err != nil {
		panic(fmt.Sprintf("tensor: %v: %v", kind, err))
	}
	out = dest(out, shape, a, kind.String())
	exec(Op{Kind: kind}, out, a, b)
	return out
}

// Add returns a + b with broadcasting.
func Add(out, a, b *Tensor) *Tensor { return broadcastOp(OpAdd, out, a, b) }

// Sub returns a - b with broadcasting.
func Sub(out, a, b *Tensor) *Tensor { return broadcastOp(OpSub, out, a, b) }

// Mul returns a·b with broadcasting.
func Mul(out, a, b *Tensor) *Tensor { return broadcastOp(OpMul, out, a, b) }

// Div returns a/b with broadcasting.
func Div(out, a, b *Tensor) *Tensor { return broadcastOp(OpDiv, out, a, b) }

// Eq returns 1 where a == b and 0 elsewhere, with broadcasting.
func Eq(out, a, b *Tensor) *Tensor { return broadcastOp(OpEq, out, a, b) }

// MatMulShape returns the shape of op(a)·op(b). Both operands have rank ≥ 2;
// their leading (batch) dimensions are equal, or one operand has rank 2 and
// is shared across the other's batch.
func MatMulShape(a, b []int, transA, transB bool) ([]int, error) {
	if len(a) < 2 || len(b) < 2 {
		return nil, fmt.Errorf("matmul needs rank ≥ 2, got %v and %v", a, b)
	}
	m, ka := a[len(a)-2], a[len(a)-1]
	if transA {
		m, ka = ka, m
	}
	kb, n := b[len(b)-2], b[len(b)-1]
	if transB {
		kb, n = n, kb
	}
	if ka != kb {
		return nil, fmt.Errorf("matmul inner dimensions differ: %v·%v (transA=%v, transB=%v)", a, b, transA, transB)
	}
	ba, bb := a[:len(a)-2], b[:len(b)-2]
	var batch []int
	switch {
	case len(ba) == 0:
		batch = bb
	case len(bb) == 0 || slices.Equal(ba, bb):
		batch = ba
	default:
		return nil, fmt.Errorf("matmul batch dimensions %v and %v differ", ba, bb)
	}
	return append(slices.Clone(batch), m, n), nil
}

// MatMul returns op(a)·op(b), batched over leading dimensions.
func MatMul(out, a, b *Tensor, transA, transB bool) *Tensor {
	shape, err := MatMulShape(a.shape, b.shape, transA, transB)
	if err != nil {
		panic("tensor: MatMul: " + err.Error())
	}
	out = dest(out, shape, a, "MatMul")
	exec(Op{Kind: OpMatMul, TransA: transA, TransB: transB}, out, a, b)
	return out
}

// MatMulAcc sets out = op(a)·op(b) + beta·out (beta 1 accumulates).
func MatMulAcc(out, a, b *Tensor, transA, transB bool, beta float32) *Tensor {
	shape, err := MatMulShape(a.shape, b.shape, transA, transB)
	if err != nil {
		panic("tensor: MatMulAcc: " + err.Error())
	}
	dest(out, shape, a, "MatMulAcc")
	exec(Op{Kind: OpMatMul, TransA: transA, TransB: transB, Beta: beta}, out, a, b)
	return out
}

// normAxes returns the sorted, de-duplicated axes (all axes if none given).
func normAxes(axes []int, r int, op string) []int {
	if len(axes) == 0 {
		out := make([]int, r)
		for i := range out {
			out[i] = i
		}
		return out
	}
	out := make([]int, len(axes))
	for i, a := range axes {
		out[i] = axis(a, r, op)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// ReduceShape is shape with the given axes set to 1.
func ReduceShape(shape []int, axes ...int) []int {
	out := slices.Clone(shape)
	for _, a := range normAxes(axes, len(shape), "reduce") {
		out[a] = 1
	}
	return out
}

func reduce(kind OpKind, out, a *Tensor, axes []int) *Tensor {
	axes = normAxes(axes, len(a.shape), kind.String())
	out = dest(out, ReduceShape(a.shape, axes...), a, kind.String())
	exec(Op{Kind: kind, Axes: axes}, out, a)
	return out
}

// Sum sums a over axes (all if none), keeping them as size-1 dimensions.
func Sum(out, a *Tensor, axes ...int) *Tensor { return reduce(OpSum, out, a, axes) }

// Max takes the maximum over axes (all if none), keeping them as size 1.
func Max(out, a *Tensor, axes ...int) *Tensor { return reduce(OpMax, out, a, axes) }

// Mean averages a over axes (all if none), keeping them as size 1.
func Mean(out, a *Tensor, axes ...int) *Tensor {
	out = Sum(out, a, axes...)
	if n := out.Len(); n > 0 {
		MulScalar(out, out, float32(n)/float32(a.Len()))
	}
	return out
}

// SumTo reduces a (a broadcast of shape) back to shape: the gradient of a
// broadcast.
func SumTo(out, a *Tensor, shape []int) *Tensor {
	if b, err := BroadcastShape(shape, a.shape); err != nil || !slices.Equal(b, a.shape) {
		panic(fmt.Sprintf("tensor: SumTo: %v does not broadcast to %v", shape, a.shape))
	}
	lead := len(a.shape) - len(shape)
	var axes []int
	for i := range a.shape {
		if i < lead || shape[i-lead] == 1 && a.shape[i] != 1 {
			axes = append(axes, i)
		}
	}
	if len(axes) == 0 {
		return Copy(dest(out, shape, a, "SumTo"), a)
	}
	if out == nil {
		out = newOn(a.Device(), shape)
	}
	Sum(out.Reshape(ReduceShape(a.shape, axes...)...), a, axes...)
	return out
}

// Permute reorders axes: output dimension i is input dimension axes[i].
func Permute(out, a *Tensor, axes ...int) *Tensor {
	r := len(a.shape)
	if len(axes) != r {
		panic(fmt.Sprintf("tensor: Permute %v: %d axes for rank %d", a.shape, len(axes), r))
	}
	seen := make([]bool, r)
	shape := make([]int, r)
	for i, ax := range axes {
		ax = axis(ax, r, "Permute")
		if seen[ax] {
			panic(fmt.Sprintf("tensor: Permute: repeated axis in %v", axes))
		}
		seen[ax] = true
		shape[i] = a.shape[ax]
	}
	out = dest(out, shape, a, "Permute")
	exec(Op{Kind: OpPermute, Axes: slices.Clone(axes)}, out, a)
	return out
}

// Transpose swaps the last two axes.
func Transpose(out, a *Tensor) *Tensor {
	r := len(a.shape)
	if r < 2 {
		panic(fmt.Sprintf("tensor: Transpose of rank %d", r))
	}
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	axes[r-1], axes[r-2] = r-2, r-1
	return Permute(out, a, axes...)
}

// Concat joins ts along axis; all other dimensions must agree.
func Concat(out *Tensor, ax int, ts ...*Tensor) *Tensor {
	if len(ts) == 0 {
		panic("tensor: Concat of nothing")
	}
	ax = axis(ax, len(ts[0].shape), "Concat")
	shape := slices.Clone(ts[0].shape)
	shape[ax] = 0
	for _, t := range ts {
		if len(t.shape) != len(shape) {
			panic(fmt.Sprintf("tensor: Concat: ranks differ (%v, %v)", ts[0].shape, t.shape))
		}
		for i := range shape {
			if i != ax && t.shape[i] != shape[i] {
				panic(fmt.Sprintf("tensor: Concat along %d: shapes %v and %v", ax, ts[0].shape, t.shape))
			}
		}
		shape[ax] += t.shape[ax]
	}
	out = dest(out, shape, ts[0], "Concat")
	exec(Op{Kind: OpConcat, Axis: ax}, out, ts...)
	return out
}

// Slice returns a[lo:hi] along axis (a copy).
func Slice(out, a *Tensor, ax, lo, hi int) *Tensor {
	ax = axis(ax, len(a.shape), "Slice")
	if lo < 0 || hi < lo || hi > a.shape[ax] {
		panic(fmt.Sprintf("tensor: Slice [%d:%d] of axis %d in %v", lo, hi, ax, a.shape))
	}
	shape := slices.Clone(a.shape)
	shape[ax] = hi - lo
	out = dest(out, shape, a, "Slice")
	exec(Op{Kind: OpSlice, Axis: ax, Lo: lo, Hi: hi}, out, a)
	return out
}

// SliceAdd adds a into out[lo:lo+a.Dim(axis)] along axis (the gradient of Slice).
func SliceAdd(out, a *Tensor, ax, lo int) *Tensor {
	ax = axis(ax, len(out.shape), "SliceAdd")
	hi := lo + a.shape[ax]
	want := slices.Clone(out.shape)
	want[ax] = a.shape[ax]
	if lo < 0 || hi > out.shape[ax] || !slices.Equal(want, a.shape) {
		panic(fmt.Sprintf("tensor: SliceAdd %v into %v at %d along %d", a.shape, out.shape, lo, ax))
	}
	exec(Op{Kind: OpSliceAdd, Axis: ax, Lo: lo, Hi: hi}, out, a)
	return out
}

// Split cuts a along axis into pieces of the given sizes (copies).
func Split(a *Tensor, ax int, sizes ...int) []*Tensor {
	ax = axis(ax, len(a.shape), "Split")
	total := 0
	for _, s := range sizes {
		total += s
	}
	if total != a.shape[ax] {
		panic(fmt.Sprintf("tensor: Split %v along %d into %v", a.shape, ax, sizes))
	}
	out := make([]*Tensor, len(sizes))
	lo := 0
	for i, s := range sizes {
		out[i] = Slice(nil, a, ax, lo, lo+s)
		lo += s
	}
	return out
}

func checkIndex(idx []int, n int, op string) {
	for _, i := range idx {
		if i < 0 || i >= n {
			panic(fmt.Sprintf("tensor: %s: index %d out of range [0, %d)", op, i, n))
		}
	}
}

// Gather picks rows of a along axis 0: out[i] = a[idx[i]].
func Gather(out, a *Tensor, idx []int) *Tensor {
	if len(a.shape) == 0 {
		panic("tensor: Gather of a scalar")
	}
	checkIndex(idx, a.shape[0], "Gather")
	shape := slices.Clone(a.shape)
	shape[0] = len(idx)
	out = dest(out, shape, a, "Gather")
	exec(Op{Kind: OpGather, Index: idx}, out, a)
	return out
}

// ScatterAdd adds rows of a into out along axis 0: out[idx[i]] += a[i].
func ScatterAdd(out, a *Tensor, idx []int) *Tensor {
	if len(out.shape) == 0 || len(a.shape) != len(out.shape) || a.shape[0] != len(idx) ||
		!slices.Equal(a.shape[1:], out.shape[1:]) {
		panic(fmt.Sprintf("tensor: ScatterAdd %v into %v with %d indices", a.shape, out.shape, len(idx)))
	}
	checkIndex(idx, out.shape[0], "ScatterAdd")
	exec(Op{Kind: OpScatterAdd, Index: idx}, out, a)
	return out
}
