package tensor

import (
	"fmt"

	"holdgo/rng"
)

// Group normalisation of x (N, C, …): the C channels split into G groups of
// C/G consecutive channels; each (sample, group) is normalised with its mean
// and biased variance over the group's channels and all spatial positions,
//
//	y = (x − μ)/√(σ² + eps)·γ[c] + β[c].

// GroupNormGroups is NCSN++'s group count for C channels: min(C/4, 32)
// (at least 1).
func GroupNormGroups(c int) int { return max(1, min(c/4, 32)) }

func normCheck(op string, x *Tensor, groups int, params ...*Tensor) {
	if len(x.shape) < 2 || groups < 1 || x.shape[1]%groups != 0 {
		panic(fmt.Sprintf("tensor: %s: input %s with %d groups (want rank ≥ 2 and C divisible by the groups)", op, fmtShape(x.shape), groups))
	}
	for _, p := range params {
		if len(p.shape) != 1 || p.shape[0] != x.shape[1] {
			panic(fmt.Sprintf("tensor: %s: parameter %s for input %s", op, fmtShape(p.shape), fmtShape(x.shape)))
		}
	}
}

// GroupNorm returns the group normalisation of x with scale gamma and shift
// beta (both of length C).
func GroupNorm(out, x, gamma, beta *Tensor, groups int, eps float32) *Tensor {
	normCheck("GroupNorm", x, groups, gamma, beta)
	out = dest(out, x.shape, x, "GroupNorm")
	exec(Op{Kind: OpGroupNorm, Groups: groups, Scalar: eps}, out, x, gamma, beta)
	return out
}

// GroupNormBackward is the backward pass of GroupNorm(x, gamma, ·) for the
// output gradient dy in one pass over (x, dy): dx = GroupNorm's input gradient
// + beta·dx (beta 0: dx is only written), and dγ = Σ dy·x̂, dβ = Σ dy (over the
// batch and the spatial positions) added into dgamma and dbeta (length C).
// It returns dx, a new tensor when dx is nil.
func GroupNormBackward(dx, x, gamma, dy, dgamma, dbeta *Tensor, groups int, eps, beta float32) *Tensor {
	normCheck("GroupNormBackward", x, groups, gamma, dgamma, dbeta)
	if !SameShape(x, dy) {
		panic(fmt.Sprintf("tensor: GroupNormBackward: x %s, dy %s", fmtShape(x.shape), fmtShape(dy.shape)))
	}
	dx = dest(dx, x.shape, x, "GroupNormBackward")
	exec(Op{Kind: OpGroupNormBackward, Groups: groups, Scalar: eps, Beta: beta}, dx, x, gamma, dy, dgamma, dbeta)
	return dx
}

// GroupNormSiLU returns silu(GroupNorm(x, gamma, beta)) = z·σ(z) in one pass
// over x, without storing the normalised z (ResnetBlockBigGANpp's
// act(GroupNorm(·))).
func GroupNormSiLU(out, x, gamma, beta *Tensor, groups int, eps float32) *Tensor {
	normCheck("GroupNormSiLU", x, groups, gamma, beta)
	out = dest(out, x.shape, x, "GroupNormSiLU")
	exec(Op{Kind: OpGroupNormSiLU, Groups: groups, Scalar: eps}, out, x, gamma, beta)
	return out
}

// GroupNormSiLUBackward is GroupNormBackward for GroupNormSiLU(x, gamma,
// shift): the gradient at the group norm's output, dz = dy·silu'(z) with z
// recomputed from x, is formed inside the same pass and never stored.
func GroupNormSiLUBackward(dx, x, gamma, shift, dy, dgamma, dbeta *Tensor, groups int, eps, beta float32) *Tensor {
	normCheck("GroupNormSiLUBackward", x, groups, gamma, shift, dgamma, dbeta)
	if !SameShape(x, dy) {
		panic(fmt.Sprintf("tensor: GroupNormSiLUBackward: x %s, dy %s", fmtShape(x.shape), fmtShape(dy.shape)))
	}
	dx = dest(dx, x.shape, x, "GroupNormSiLUBackward")
	exec(Op{Kind: OpGroupNormSiLUBackward, Groups: groups, Scalar: eps, Beta: beta}, dx, x, gamma, shift, dy, dgamma, dbeta)
	return dx
}

// GroupNormSiLUDropout returns Dropout(GroupNormSiLU(x, gamma, beta), s, p, first) in one pass
// over x: the mask of Dropout (the uniform draw first+j of s, rng.Stream.DropoutFrom) applied as
// each output is written, with the same float32 operations as the two ops in sequence (bit for
// bit). It is NCSN++'s act(GroupNorm_1(·)) followed by dropout, in training (p > 0).
func GroupNormSiLUDropout(out, x, gamma, beta *Tensor, groups int, eps float32, s rng.Stream, p float64, first uint64) *Tensor {
	normCheck("GroupNormSiLUDropout", x, groups, gamma, beta)
	dropCheck("GroupNormSiLUDropout", p)
	out = dest(out, x.shape, x, "GroupNormSiLUDropout")
	exec(Op{Kind: OpGroupNormSiLUDropout, Groups: groups, Scalar: eps, Stream: s, First: first, Coef: []float64{p}}, out, x, gamma, beta)
	return out
}

// GroupNormSiLUDropoutBackward is GroupNormSiLUBackward of dy·mask, the gradient at GroupNormSiLU's
// output of GroupNormSiLUDropout(x, gamma, shift, ·, s, p, first): the mask is regenerated from
// its counters as dy is read and the masked dy is never stored.
func GroupNormSiLUDropoutBackward(dx, x, gamma, shift, dy, dgamma, dbeta *Tensor, groups int, eps, beta float32, s rng.Stream, p float64, first uint64) *Tensor {
	normCheck("GroupNormSiLUDropoutBackward", x, groups, gamma, shift, dgamma, dbeta)
	dropCheck("GroupNormSiLUDropoutBackward", p)
	if !SameShape(x, dy) {
		panic(fmt.Sprintf("tensor: GroupNormSiLUDropoutBackward: x %s, dy %s", fmtShape(x.shape), fmtShape(dy.shape)))
	}
	dx = dest(dx, x.shape, x, "GroupNormSiLUDropoutBackward")
	exec(Op{Kind: OpGroupNormSiLUDropoutBackward, Groups: groups, Scalar: eps, Beta: beta, Stream: s, First: first, Coef: []float64{p}},
		dx, x, gamma, shift, dy, dgamma, dbeta)
	return dx
}

// Softmax returns the softmax of x along its last axis.
func Softmax(out, x *Tensor) *Tensor { return ScaledSoftmax(out, x, 1) }

// ScaledSoftmax returns the softmax of scale·x along the last axis, the
// scaling done in the softmax's own pass (attention's 1/√C).
func ScaledSoftmax(out, x *Tensor, scale float32) *Tensor {
	if len(x.shape) == 0 {
		panic("tensor: Softmax of a scalar")
	}
	out = dest(out, x.shape, x, "Softmax")
	exec(Op{Kind: OpSoftmax, Scalar: scale}, out, x)
	return out
}

// SoftmaxGrad returns y·(dy − Σ y·dy) along the last axis: the gradient of
// Softmax with output y.
func SoftmaxGrad(out, y, dy *Tensor) *Tensor { return ScaledSoftmaxGrad(out, y, dy, 1) }

// ScaledSoftmaxGrad returns scale·y·(dy − Σ y·dy) along the last axis: the
// gradient with respect to x of ScaledSoftmax(x, scale) with output y.
func ScaledSoftmaxGrad(out, y, dy *Tensor, scale float32) *Tensor {
	if !SameShape(y, dy) {
		panic(fmt.Sprintf("tensor: SoftmaxGrad: shapes %v and %v differ", y.shape, dy.shape))
	}
	out = dest(out, y.shape, y, "SoftmaxGrad")
	exec(Op{Kind: OpSoftmaxGrad, Scalar: scale}, out, y, dy)
	return out
}
