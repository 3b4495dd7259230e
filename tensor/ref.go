package tensor

import (
	"fmt"
	"math"
)

// Reference is a device whose kernels are the plain, obviously correct
// definitions of every op: one multi-index loop per op, float64 accumulation,
// no SIMD and no goroutines. Its memory is host memory behind the Buffer
// interface, so it also exercises the device seam. Tests compare every fast
// kernel (and, through tensor/optest, the CUDA device) with it.
var Reference Device = refDevice{}

type refDevice struct{}

type refBuffer struct{ data []float32 }

func (refDevice) Name() string { return "reference" }

func (refDevice) Alloc(n int) (Buffer, error) { return &refBuffer{make([]float32, n)}, nil }

func (b *refBuffer) Device() Device { return Reference }
func (b *refBuffer) Len() int       { return len(b.data) }
func (b *refBuffer) Read(dst []float32) error {
	if len(dst) != len(b.data) {
		return fmt.Errorf("read %d elements from a buffer of %d", len(dst), len(b.data))
	}
	copy(dst, b.data)
	return nil
}
func (b *refBuffer) Write(src []float32) error {
	if len(src) != len(b.data) {
		return fmt.Errorf("write %d elements to a buffer of %d", len(src), len(b.data))
	}
	copy(b.data, src)
	return nil
}

func (b *refBuffer) Slice(offset, n int) (Buffer, error) {
	if offset < 0 || n < 0 || offset+n > len(b.data) {
		return nil, fmt.Errorf("slice of %d elements at %d in a buffer of %d", n, offset, len(b.data))
	}
	return &refBuffer{b.data[offset : offset+n : offset+n]}, nil
}

func refData(t *Tensor) []float32 { return t.buf.(*refBuffer).data }

// forEach calls f with every multi-index of shape in row-major order.
func forEach(shape []int, f func(idx []int)) {
	n := numel(shape)
	idx := make([]int, len(shape))
	for range n {
		f(idx)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// offset is the row-major position of idx in shape, with broadcasting:
// idx is right-aligned and size-1 dimensions of shape read index 0.
func offset(shape, idx []int) int {
	off := 0
	lead := len(idx) - len(shape)
	for i, d := range shape {
		c := idx[lead+i]
		if d == 1 {
			c = 0
		}
		off = off*d + c
	}
	return off
}

func (refDevice) Exec(op Op, out *Tensor, in ...*Tensor) error {
	if op.Kind >= numOps {
		return fmt.Errorf("%v: %w", op.Kind, ErrUnsupported)
	}
	row := &opTable[op.Kind]
	o := refData(out)
	switch row.class {
	case ClassUnary:
		for i, v := range refData(in[0]) {
			o[i] = float32(row.unary(float64(op.Scalar), float64(v)))
		}
	case ClassPair, ClassBinary:
		a, b := refData(in[0]), refData(in[1])
		forEach(out.shape, func(idx []int) {
			o[offset(out.shape, idx)] = float32(row.binary(float64(a[offset(in[0].shape, idx)]), float64(b[offset(in[1].shape, idx)])))
		})
	default:
		row.ref(op, out, in) // the row's kernel (optable.go)
	}
	return nil
}

func refFill(op Op, out *Tensor, _ []*Tensor) {
	o := refData(out)
	for i := range o {
		o[i] = op.Scalar
	}
}

func refCopy(_ Op, out *Tensor, in []*Tensor) { copy(refData(out), refData(in[0])) }

func refPermute(op Op, out *Tensor, in []*Tensor) {
	o, a := refData(out), refData(in[0])
	src := make([]int, len(op.Axes))
	forEach(out.shape, func(idx []int) {
		for i, ax := range op.Axes {
			src[(ax+len(src))%len(src)] = idx[i]
		}
		o[offset(out.shape, idx)] = a[offset(in[0].shape, src)]
	})
}

func refConcat(op Op, out *Tensor, in []*Tensor) {
	o := refData(out)
	base := 0
	for _, t := range in {
		a := refData(t)
		forEach(t.shape, func(idx []int) {
			dst := append([]int(nil), idx...)
			dst[op.Axis] += base
			o[offset(out.shape, dst)] = a[offset(t.shape, idx)]
		})
		base += t.shape[op.Axis]
	}
}

// refSlice runs OpSlice and OpSliceAdd.
func refSlice(op Op, out *Tensor, in []*Tensor) {
	small, big := out, in[0]
	if op.Kind == OpSliceAdd {
		small, big = in[0], out
	}
	s, b := refData(small), refData(big)
	forEach(small.shape, func(idx []int) {
		src := append([]int(nil), idx...)
		src[op.Axis] += op.Lo
		if op.Kind == OpSlice {
			s[offset(small.shape, idx)] = b[offset(big.shape, src)]
		} else {
			b[offset(big.shape, src)] += s[offset(small.shape, idx)]
		}
	})
}

// refRows runs OpGather and OpScatterAdd.
func refRows(op Op, out *Tensor, in []*Tensor) {
	rows, many := in[0], out
	if op.Kind == OpGather {
		rows, many = out, in[0]
	}
	r, m := refData(rows), refData(many)
	forEach(rows.shape, func(idx []int) {
		src := append([]int(nil), idx...)
		src[0] = op.Index[idx[0]]
		if op.Kind == OpGather {
			r[offset(rows.shape, idx)] = m[offset(many.shape, src)]
		} else {
			m[offset(many.shape, src)] += r[offset(rows.shape, idx)]
		}
	})
}

// refFused runs a fused family: fused.go's plain loops are their own reference.
func refFused(op Op, out *Tensor, in []*Tensor) {
	in32 := make([][]float32, len(in))
	for i, t := range in {
		in32[i] = refData(t)
	}
	fusedExec(op, refData(out), out, in, in32)
}

func refMatMul(op Op, out *Tensor, in []*Tensor) {
	a, b := in[0], in[1]
	o, ad, bd := refData(out), refData(a), refData(b)
	r := len(out.shape)
	ar, br := len(a.shape), len(b.shape)
	k := a.shape[ar-1]
	if op.TransA {
		k = a.shape[ar-2]
	}
	at := func(idx []int, i, p int) float32 { // op(a)[batch, i, p]
		j := append(append([]int(nil), idx[:r-2]...), i, p)
		if op.TransA {
			j[r-2], j[r-1] = p, i
		}
		return ad[offset(a.shape, j[len(j)-ar:])]
	}
	bt := func(idx []int, p, q int) float32 { // op(b)[batch, p, q]
		j := append(append([]int(nil), idx[:r-2]...), p, q)
		if op.TransB {
			j[r-2], j[r-1] = q, p
		}
		return bd[offset(b.shape, j[len(j)-br:])]
	}
	forEach(out.shape, func(idx []int) {
		var s float64
		for p := range k {
			s += float64(at(idx, idx[r-2], p)) * float64(bt(idx, p, idx[r-1]))
		}
		pos := offset(out.shape, idx)
		if op.Beta != 0 {
			s += float64(op.Beta) * float64(o[pos])
		}
		o[pos] = float32(s)
	})
}

func refReduce(op Op, out *Tensor, in []*Tensor) {
	a := in[0]
	o, ad := refData(out), refData(a)
	acc := make([]float64, len(o))
	for i := range acc {
		if op.Kind == OpMax {
			acc[i] = math.Inf(-1)
		}
	}
	forEach(a.shape, func(idx []int) {
		j := offset(out.shape, idx) // reduced axes have size 1 in out
		v := float64(ad[offset(a.shape, idx)])
		if op.Kind == OpSum {
			acc[j] += v
		} else if v > acc[j] || math.IsNaN(v) {
			acc[j] = v
		}
	})
	for i, v := range acc {
		o[i] = float32(v)
	}
}

// refSgemm is the plain row-major GEMM: C = A·B + beta·C (op(A) m×k, op(B)
// k×n), float64 accumulation. beta == 0 overwrites C.
func refSgemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				ia, ib := i*lda+p, p*ldb+j
				if transA {
					ia = p*lda + i
				}
				if transB {
					ib = j*ldb + p
				}
				av, bv := a[ia], b[ib]
				s += float64(av) * float64(bv)
			}
			s *= float64(alpha)
			if beta != 0 {
				s += float64(beta) * float64(c[i*ldc+j])
			}
			c[i*ldc+j] = float32(s)
		}
	}
}
