package autograd

import (
	"fmt"
	"math"

	"holdgo/tensor"
)

// Softmax returns the softmax of x along its last axis.
func (g *Tape) Softmax(x *Value) *Value {
	var v *Value
	v = g.record("Softmax", tensor.Softmax(g.out(x.Shape()...), x.T), func(dy *tensor.Tensor) {
		g.accum(x, tensor.SoftmaxGrad(g.tmp(x.Shape()...), v.T, dy))
	}, x)
	v.save(v.T)
	return v
}

// Attention is single-head spatial self-attention on q, k, v (N, C, S), S the
// flattened positions (NCSN++'s AttnBlockpp core, docs/ncsnpp.md#attention-block):
//
//	w[n, i, j] = softmax_j(Σ_c q[n,c,i]·k[n,c,j] / √C),   o[n, c, i] = Σ_j w[n,i,j]·v[n,c,j].
//
// One node: the attention weights (N, S, S) are kept for the backward pass.
func (g *Tape) Attention(q, k, v *Value) *Value {
	qs := q.Shape()
	if len(qs) != 3 || !tensor.SameShape(q.T, k.T) || !tensor.SameShape(q.T, v.T) {
		panic(fmt.Sprintf("autograd: Attention of q %v, k %v, v %v (want equal (N, C, S))", qs, k.Shape(), v.Shape()))
	}
	n, c, s := qs[0], qs[1], qs[2]
	scale := float32(1 / math.Sqrt(float64(c)))
	w := tensor.MatMul(g.tmp(n, s, s), q.T, k.T, true, false)
	tensor.ScaledSoftmax(w, w, scale) // the 1/√C inside the softmax's pass
	o := tensor.MatMul(g.out(n, c, s), v.T, w, false, true)
	return g.record("Attention", o, func(do *tensor.Tensor) {
		if v.needsGrad { // dv = do·w
			gv, beta := g.gradDest(v)
			tensor.MatMulAcc(gv, do, w, false, false, beta)
		}
		if !q.needsGrad && !k.needsGrad {
			return
		}
		dw := tensor.MatMul(g.tmp(n, s, s), do, v.T, true, false) // dw = doᵀ·v
		ds := tensor.ScaledSoftmaxGrad(dw, w, dw, scale)
		if q.needsGrad { // dq = k·dsᵀ
			gq, beta := g.gradDest(q)
			tensor.MatMulAcc(gq, k.T, ds, false, true, beta)
		}
		if k.needsGrad { // dk = q·ds
			gk, beta := g.gradDest(k)
			tensor.MatMulAcc(gk, q.T, ds, false, false, beta)
		}
	}, q, k, v).save(q.T, k.T, v.T, w)
}
