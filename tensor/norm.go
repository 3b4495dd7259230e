package tensor

import "fmt"

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

// GroupNormGrad returns the gradient of GroupNorm with respect to x for the
// output gradient dy (the statistics are recomputed from x).
func GroupNormGrad(out, x, gamma, dy *Tensor, groups int, eps float32) *Tensor {
	normCheck("GroupNormGrad", x, groups, gamma)
	if !SameShape(x, dy) {
		panic(fmt.Sprintf("tensor: GroupNormGrad: x %s, dy %s", fmtShape(x.shape), fmtShape(dy.shape)))
	}
	out = dest(out, x.shape, x, "GroupNormGrad")
	exec(Op{Kind: OpGroupNormGrad, Groups: groups, Scalar: eps}, out, x, gamma, dy)
	return out
}

// GroupNormParamGrad returns (2, C): the gradients of GroupNorm with respect
// to gamma (row 0) and beta (row 1).
func GroupNormParamGrad(out, x, dy *Tensor, groups int, eps float32) *Tensor {
	normCheck("GroupNormParamGrad", x, groups)
	if !SameShape(x, dy) {
		panic(fmt.Sprintf("tensor: GroupNormParamGrad: x %s, dy %s", fmtShape(x.shape), fmtShape(dy.shape)))
	}
	out = dest(out, []int{2, x.shape[1]}, x, "GroupNormParamGrad")
	exec(Op{Kind: OpGroupNormParamGrad, Groups: groups, Scalar: eps}, out, x, dy)
	return out
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

// GroupNormSiLUGrad returns dz = dy·silu'(z), z = GroupNorm(x, gamma, beta)
// recomputed from x: the gradient at the group norm's output, from which
// GroupNormGrad and GroupNormParamGrad give dx, dγ and dβ of GroupNormSiLU.
func GroupNormSiLUGrad(out, x, gamma, beta, dy *Tensor, groups int, eps float32) *Tensor {
	normCheck("GroupNormSiLUGrad", x, groups, gamma, beta)
	if !SameShape(x, dy) {
		panic(fmt.Sprintf("tensor: GroupNormSiLUGrad: x %s, dy %s", fmtShape(x.shape), fmtShape(dy.shape)))
	}
	out = dest(out, x.shape, x, "GroupNormSiLUGrad")
	exec(Op{Kind: OpGroupNormSiLUGrad, Groups: groups, Scalar: eps}, out, x, gamma, beta, dy)
	return out
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
