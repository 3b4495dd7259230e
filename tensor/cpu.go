package tensor

import (
	"fmt"
	"math"

	"holdgo/internal/gemm"
	"holdgo/internal/hugepage"
	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// CPU is the host device: the fast kernels, split over the worker pool.
var CPU Device = cpuDevice{}

type cpuDevice struct{}

func (cpuDevice) Name() string { return "cpu" }

// Alloc returns host memory (New and Zeros make host tensors over such memory; Tensor.Buffer
// shows a host tensor's memory as a Buffer).
func (cpuDevice) Alloc(n int) (Buffer, error) { return &cpuBuffer{hugepage.Make(n)}, nil }

// grain is the smallest chunk of elements worth handing to another core.
const grain = 1 << 14

// sgemm is the row-major GEMM the CPU device uses (C = A·B + beta·C with
// optional transposes): blocked, with AVX-512/AVX2 microkernels.
var sgemm = gemm.Sgemm

// Exec dispatches op by its class (optable.go).
func (cpuDevice) Exec(op Op, out *Tensor, in ...*Tensor) error {
	if op.Kind >= numOps {
		return fmt.Errorf("%v: %w", op.Kind, ErrUnsupported)
	}
	o := out.data
	switch opTable[op.Kind].class {
	case ClassFill:
		parallel.For(len(o), grain, func(lo, hi int) { fillSlice(o[lo:hi], op.Scalar) })
	case ClassCopy:
		a := in[0].data
		parallel.For(len(o), grain, func(lo, hi int) { copy(o[lo:hi], a[lo:hi]) })
	case ClassUnary:
		a, f := in[0].data, unaryFunc(op)
		parallel.For(len(o), grain, func(lo, hi int) { f(o[lo:hi], a[lo:hi]) })
	case ClassPair:
		a, b, f := in[0].data, in[1].data, pairFunc(op.Kind)
		parallel.For(len(o), grain, func(lo, hi int) { f(o[lo:hi], a[lo:hi], b[lo:hi]) })
	case ClassBinary:
		cpuBinary(op.Kind, out, in[0], in[1])
	case ClassMatMul:
		cpuMatMul(op, out, in[0], in[1])
	case ClassReduce:
		cpuReduce(op, out, in[0])
	case ClassLayout:
		switch op.Kind {
		case OpPermute:
			cpuPermute(op.Axes, out, in[0])
		case OpConcat:
			cpuConcat(op.Axis, out, in)
		case OpSlice, OpSliceAdd:
			cpuSlice(op, out, in[0])
		case OpGather, OpScatterAdd:
			cpuRows(op, out, in[0])
		default:
			return fmt.Errorf("%v: %w", op.Kind, ErrUnsupported)
		}
	case ClassImage:
		cpuImageOp(op, out, in) // cpu_conv.go, cpu_norm.go, cpu_fir.go
	case ClassFused: // cpu_fused.go
		in32 := make([][]float32, len(in))
		for i, t := range in {
			in32[i] = t.data
		}
		cpuFused(op, o, out, in, in32)
	default:
		return fmt.Errorf("%v: %w", op.Kind, ErrUnsupported)
	}
	return nil
}

// fillSlice sets every element of o to v: memclr for zero (the gradients' reset), else one element
// copied into doubling spans (memmove), either a fraction of an element-by-element loop's time.
func fillSlice(o []float32, v float32) {
	if v == 0 && !math.Signbit(float64(v)) {
		clear(o)
		return
	}
	if len(o) == 0 {
		return
	}
	o[0] = v
	for n := 1; n < len(o); n *= 2 {
		copy(o[n:], o[:n])
	}
}

// unaryFunc returns the slice kernel of an element-wise op.
func unaryFunc(op Op) func(o, a []float32) {
	s := op.Scalar
	switch op.Kind {
	case OpNeg:
		return func(o, a []float32) {
			for i, v := range a[:len(o)] {
				o[i] = -v
			}
		}
	case OpExp:
		return vec.Exp
	case OpLog:
		return func(o, a []float32) {
			for i, v := range a[:len(o)] {
				o[i] = float32(math.Log(float64(v)))
			}
		}
	case OpSin:
		return sinSlice
	case OpSqrt:
		return func(o, a []float32) {
			for i, v := range a[:len(o)] {
				o[i] = float32(math.Sqrt(float64(v)))
			}
		}
	case OpSquare:
		return func(o, a []float32) {
			for i, v := range a[:len(o)] {
				o[i] = v * v
			}
		}
	case OpTanh:
		return vec.Tanh
	case OpSigmoid:
		return vec.Sigmoid
	case OpSiLU:
		return vec.SiLU
	case OpAddScalar:
		return func(o, a []float32) { vec.AddScalar(o, a[:len(o)], s) }
	case OpMulScalar:
		return func(o, a []float32) { vec.Scale(o, a[:len(o)], s) }
	}
	return refKernel1(op)
}

// refKernel1 runs an element-wise op without a fast kernel through its row's reference function
// (float64, rounded once): a new op works on the CPU device from its row alone.
func refKernel1(op Op) func(o, a []float32) {
	f, s := opTable[op.Kind].unary, float64(op.Scalar)
	return func(o, a []float32) {
		for i, v := range a[:len(o)] {
			o[i] = float32(f(s, float64(v)))
		}
	}
}

// pairFunc returns the slice kernel of a same-shape two-operand op.
func pairFunc(k OpKind) func(o, a, b []float32) {
	switch k {
	case OpSiLUGrad:
		return func(o, x, dy []float32) { vec.SiLUGrad(o, x[:len(o)], dy[:len(o)]) }
	case OpTanhGrad:
		return func(o, y, dy []float32) {
			for i, v := range y[:len(o)] {
				o[i] = dy[i] * (1 - v*v)
			}
		}
	case OpSigmoidGrad:
		return func(o, y, dy []float32) {
			for i, v := range y[:len(o)] {
				o[i] = dy[i] * v * (1 - v)
			}
		}
	}
	f := opTable[k].binary // no fast kernel: the row's reference function
	return func(o, a, b []float32) {
		for i, v := range a[:len(o)] {
			o[i] = float32(f(float64(v), float64(b[i])))
		}
	}
}

func binaryFunc(k OpKind) func(a, b float32) float32 {
	switch k {
	case OpAdd:
		return func(a, b float32) float32 { return a + b }
	case OpSub:
		return func(a, b float32) float32 { return a - b }
	case OpMul:
		return func(a, b float32) float32 { return a * b }
	case OpDiv:
		return func(a, b float32) float32 { return a / b }
	case OpEq:
		return func(a, b float32) float32 {
			if a == b {
				return 1
			}
			return 0
		}
	}
	f := opTable[k].binary // no fast kernel: the row's reference function
	return func(a, b float32) float32 { return float32(f(float64(a), float64(b))) }
}

// binaryRow applies k to contiguous rows o = a ∘ b; a or b may be a single
// broadcast element (stride 0) given by sa/sb == 0.
func binaryRow(k OpKind, o, a, b []float32, sa, sb int) {
	n := len(o)
	switch {
	case k == OpAdd && sa == 1 && sb == 1:
		vec.Add(o, a[:n], b[:n])
	case k == OpMul && sa == 1 && sb == 1:
		vec.Mul(o, a[:n], b[:n])
	case k == OpSub && sa == 1 && sb == 1:
		vec.Sub(o, a[:n], b[:n])
	default:
		f := binaryFunc(k)
		ia, ib := 0, 0
		for i := range o {
			o[i] = f(a[ia], b[ib])
			ia += sa
			ib += sb
		}
	}
}

// bstrides returns the element strides of a shape right-aligned into out's
// rank, with 0 for broadcast dimensions.
func bstrides(shape []int, rank int) []int {
	st := make([]int, rank)
	s := 1
	for i := len(shape) - 1; i >= 0; i-- {
		j := rank - len(shape) + i
		if shape[i] != 1 {
			st[j] = s
		}
		s *= shape[i]
	}
	return st
}

func cpuBinary(k OpKind, out, a, b *Tensor) {
	o, ad, bd := out.data, a.data, b.data
	n := len(o)
	if n == 0 {
		return
	}
	if len(ad) == n && len(bd) == n {
		parallel.For(n, grain, func(lo, hi int) { binaryRow(k, o[lo:hi], ad[lo:hi], bd[lo:hi], 1, 1) })
		return
	}
	r := len(out.shape)
	sa, sb := bstrides(a.shape, r), bstrides(b.shape, r)
	inner := out.shape[r-1]
	rows := n / inner
	ia, ib := sa[r-1], sb[r-1]
	parallel.For(rows, max(1, grain/inner), func(lo, hi int) {
		for row := lo; row < hi; row++ {
			// Offsets of this row in a and b from its multi-index.
			offA, offB, rem := 0, 0, row
			for d := r - 2; d >= 0; d-- {
				c := rem % out.shape[d]
				rem /= out.shape[d]
				offA += c * sa[d]
				offB += c * sb[d]
			}
			binaryRow(k, o[row*inner:(row+1)*inner], ad[offA:], bd[offB:], ia, ib)
		}
	})
}

// matDims returns batch count, rows, cols and the batch stride of x (0 when
// x is a shared rank-2 operand).
func matDims(x *Tensor, batch int) (rows, cols, stride int) {
	r := len(x.shape)
	rows, cols = x.shape[r-2], x.shape[r-1]
	if r > 2 || batch == 1 {
		stride = rows * cols
	}
	return
}

func cpuMatMul(op Op, out, a, b *Tensor) {
	r := len(out.shape)
	m, n := out.shape[r-2], out.shape[r-1]
	batch := 1
	for _, d := range out.shape[:r-2] {
		batch *= d
	}
	ar, ac, as := matDims(a, batch)
	_, bc, bs := matDims(b, batch)
	k := ac
	if op.TransA {
		k = ar
	}
	if m == 0 || n == 0 {
		return
	}
	for i := range batch { // a stride of at least 1 keeps empty operands legal for GEMM
		sgemm(op.TransA, op.TransB, m, n, k, 1, a.data[i*as:], max(ac, 1), b.data[i*bs:], max(bc, 1), op.Beta, out.data[i*m*n:], n)
	}
}

// outerInner splits shape around axis ax: the product of the dimensions
// before it and after it.
func outerInner(shape []int, ax int) (outer, inner int) {
	outer, inner = 1, 1
	for i, d := range shape {
		switch {
		case i < ax:
			outer *= d
		case i > ax:
			inner *= d
		}
	}
	return
}

// cpuReduce reduces one axis at a time, each as an (outer, r, inner) block.
func cpuReduce(op Op, out, a *Tensor) {
	src, shape := a.data, append([]int(nil), a.shape...)
	for i, ax := range op.Axes {
		outer, inner := outerInner(shape, ax)
		r := shape[ax]
		shape[ax] = 1
		var dst []float32
		if i == len(op.Axes)-1 {
			dst = out.data
		} else {
			dst = make([]float32, outer*inner)
		}
		reduceAxis(op.Kind, dst, src, outer, r, inner)
		src = dst
	}
	if len(op.Axes) == 0 {
		copy(out.data, a.data)
	}
}

func reduceAxis(k OpKind, dst, src []float32, outer, r, inner int) {
	if k == OpSum && inner >= 16 && r > 1 {
		// Sum whole rows with the vector kernel: row t of block o adds into
		// dst's row o, reading src contiguously (a bias gradient is this case).
		parallel.For(outer, max(1, grain/(r*inner)), func(lo, hi int) {
			for o := lo; o < hi; o++ {
				row, base := dst[o*inner:(o+1)*inner], o*r*inner
				copy(row, src[base:base+inner])
				for t := 1; t < r; t++ {
					vec.Acc(row, src[base+t*inner:base+(t+1)*inner])
				}
			}
		})
		return
	}
	parallel.For(outer*inner, max(1, grain/max(r, 1)), func(lo, hi int) {
		for j := lo; j < hi; j++ {
			o, i := j/inner, j%inner
			base := o*r*inner + i
			if k == OpSum {
				var s float32
				for t := range r {
					s += src[base+t*inner]
				}
				dst[j] = s
				continue
			}
			m := float32(math.Inf(-1))
			for t := range r {
				if v := src[base+t*inner]; v > m || v != v {
					m = v
				}
			}
			dst[j] = m
		}
	})
}

func cpuPermute(axes []int, out, a *Tensor) {
	r := len(a.shape)
	inStride := make([]int, r)
	s := 1
	for i := r - 1; i >= 0; i-- {
		inStride[i] = s
		s *= a.shape[i]
	}
	st := make([]int, r) // input stride of each output dimension
	for i, ax := range axes {
		if ax < 0 {
			ax += r
		}
		st[i] = inStride[ax]
	}
	if r == 0 || len(out.data) == 0 {
		copy(out.data, a.data)
		return
	}
	inner := out.shape[r-1]
	rows := len(out.data) / inner
	o, src, last := out.data, a.data, st[r-1]
	parallel.For(rows, max(1, grain/inner), func(lo, hi int) {
		for row := lo; row < hi; row++ {
			off, rem := 0, row
			for d := r - 2; d >= 0; d-- {
				off += rem % out.shape[d] * st[d]
				rem /= out.shape[d]
			}
			dst := o[row*inner : (row+1)*inner]
			for i := range dst {
				dst[i] = src[off+i*last]
			}
		}
	})
}

func cpuConcat(ax int, out *Tensor, in []*Tensor) {
	outer, inner := outerInner(out.shape, ax)
	width := out.shape[ax] * inner
	pos := 0
	for _, t := range in {
		w := t.shape[ax] * inner
		for o := range outer {
			copy(out.data[o*width+pos:o*width+pos+w], t.data[o*w:(o+1)*w])
		}
		pos += w
	}
}

func cpuSlice(op Op, out, a *Tensor) {
	big := a
	if op.Kind == OpSliceAdd {
		big = out
	}
	outer, inner := outerInner(big.shape, op.Axis)
	width := big.shape[op.Axis] * inner
	w := (op.Hi - op.Lo) * inner
	off := op.Lo * inner
	for o := range outer {
		if op.Kind == OpSlice {
			copy(out.data[o*w:(o+1)*w], a.data[o*width+off:o*width+off+w])
			continue
		}
		dst, src := out.data[o*width+off:o*width+off+w], a.data[o*w:(o+1)*w]
		for i, v := range src {
			dst[i] += v
		}
	}
}

func cpuRows(op Op, out, a *Tensor) {
	row := 1
	for _, d := range a.shape[1:] {
		row *= d
	}
	for i, j := range op.Index {
		if op.Kind == OpGather {
			copy(out.data[i*row:(i+1)*row], a.data[j*row:(j+1)*row])
			continue
		}
		dst, src := out.data[j*row:(j+1)*row], a.data[i*row:(i+1)*row]
		for t, v := range src {
			dst[t] += v
		}
	}
}

// sinSlice sets o[i] = sin(a[i]); the math (float64 Cody–Waite reduction by
// π/2, Taylor polynomials, |x| ≥ 2¹⁹ or non-finite via math.Sin) lives in
// vec.Sin. Fourier features call it on every step.
func sinSlice(o, a []float32) { vec.Sin(o, a[:len(o)]) }
