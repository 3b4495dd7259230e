package tensor

import "fmt"

// 2-D convolution (cross-correlation, as PyTorch's conv2d) on NCHW tensors
// with an OIHW weight, one stride and one zero padding for both axes:
//
//	out[n, o, y, x] = Σ_{c, ky, kx} w[o, c, ky, kx]·in[n, c, y·S − P + ky, x·S − P + kx] + bias[o]
//
// or + bias[n, o] with a per-sample bias (N, O), which folds an additive
// per-sample term (NCSN++'s time embedding) into the convolution's output pass;
// (in = 0 outside the image); OH = (H + 2P − KH)/S + 1, likewise OW.

// ConvOutSize is the output length of a convolution along one axis.
func ConvOutSize(n, k, stride, pad int) int { return (n+2*pad-k)/stride + 1 }

func convCheck(op string, x, w []int, stride, pad int) (oh, ow int) {
	if len(x) != 4 || len(w) != 4 || x[1] != w[1] || stride < 1 || pad < 0 {
		panic(fmt.Sprintf("tensor: %s: input %s, weight %s, stride %d, pad %d (want NCHW, OIHW with matching C, stride ≥ 1, pad ≥ 0)",
			op, fmtShape(x), fmtShape(w), stride, pad))
	}
	oh, ow = ConvOutSize(x[2], w[2], stride, pad), ConvOutSize(x[3], w[3], stride, pad)
	if oh < 1 || ow < 1 {
		panic(fmt.Sprintf("tensor: %s: kernel %s larger than the padded input %s", op, fmtShape(w), fmtShape(x)))
	}
	return oh, ow
}

// Conv2d returns conv2d(x, w) + bias for x (N, C, H, W), w (O, C, KH, KW)
// and bias (O), (N, O) or nil.
func Conv2d(out, x, w, bias *Tensor, stride, pad int) *Tensor {
	oh, ow := convCheck("Conv2d", x.shape, w.shape, stride, pad)
	out = dest(out, []int{x.shape[0], w.shape[0], oh, ow}, x, "Conv2d")
	op := Op{Kind: OpConv2d, Stride: stride, Pad: pad}
	if bias == nil {
		exec(op, out, x, w)
		return out
	}
	perSample := len(bias.shape) == 2 && bias.shape[0] == x.shape[0] && bias.shape[1] == w.shape[0]
	if !perSample && (len(bias.shape) != 1 || bias.shape[0] != w.shape[0]) {
		panic(fmt.Sprintf("tensor: Conv2d: bias %s for weight %s", fmtShape(bias.shape), fmtShape(w.shape)))
	}
	exec(op, out, x, w, bias)
	return out
}

// Conv2dTwoBias returns conv2d(x, w) + (bias[o] + sampleBias[n, o]), bias (O)
// and sampleBias (N, O), the two added in float32 before they join the sum
// (as Conv2d(x, w, Add(sampleBias, bias)) adds them): a convolution with its
// own bias and a per-sample shift (NCSN++'s time embedding) in one op.
func Conv2dTwoBias(out, x, w, bias, sampleBias *Tensor, stride, pad int) *Tensor {
	oh, ow := convCheck("Conv2dTwoBias", x.shape, w.shape, stride, pad)
	if len(bias.shape) != 1 || bias.shape[0] != w.shape[0] || !shapeEq(sampleBias.shape, []int{x.shape[0], w.shape[0]}) {
		panic(fmt.Sprintf("tensor: Conv2dTwoBias: biases %s and %s for input %s, weight %s", fmtShape(bias.shape),
			fmtShape(sampleBias.shape), fmtShape(x.shape), fmtShape(w.shape)))
	}
	out = dest(out, []int{x.shape[0], w.shape[0], oh, ow}, x, "Conv2dTwoBias")
	exec(Op{Kind: OpConv2d, Stride: stride, Pad: pad}, out, x, w, bias, sampleBias)
	return out
}

// Conv2dResidual returns (r + conv2d(x, w) + bias)·s: a convolution with its
// per-channel bias ending in a residual join and its scale (NCSN++'s
// (x + h)/√2), rounded as AddScaled(r, Conv2d(x, w, bias), s) rounds it — one
// op, the join in the convolution's output pass.
func Conv2dResidual(out, x, w, bias, r *Tensor, s float32, stride, pad int) *Tensor {
	oh, ow := convCheck("Conv2dResidual", x.shape, w.shape, stride, pad)
	shape := []int{x.shape[0], w.shape[0], oh, ow}
	if len(bias.shape) != 1 || bias.shape[0] != w.shape[0] || !shapeEq(r.shape, shape) {
		panic(fmt.Sprintf("tensor: Conv2dResidual: bias %s and residual %s for output %s", fmtShape(bias.shape),
			fmtShape(r.shape), fmtShape(shape)))
	}
	out = dest(out, shape, x, "Conv2dResidual")
	exec(Op{Kind: OpConv2dResidual, Stride: stride, Pad: pad, Scalar: s}, out, x, w, bias, r)
	return out
}

// Conv2dGradInput sets dx = conv2dᵀ(dy, w) + beta·dx: the gradient of Conv2d
// with respect to its input, whose shape dx has.
func Conv2dGradInput(dx, dy, w *Tensor, stride, pad int, beta float32) *Tensor {
	oh, ow := convCheck("Conv2dGradInput", dx.shape, w.shape, stride, pad)
	if want := []int{dx.shape[0], w.shape[0], oh, ow}; !shapeEq(dy.shape, want) {
		panic(fmt.Sprintf("tensor: Conv2dGradInput: dy %s, want %s", fmtShape(dy.shape), fmtShape(want)))
	}
	exec(Op{Kind: OpConv2dGradInput, Stride: stride, Pad: pad, Beta: beta}, dx, dy, w)
	return dx
}

// Conv2dGradWeightBias is Conv2dGradWeight that also adds the gradient of a
// per-channel bias, Σ over the batch and positions of dy, into db (length O),
// from the same pass over dy (on CUDA, inside the weight gradient's kernel).
func Conv2dGradWeightBias(dw, db, x, dy *Tensor, stride, pad int, beta float32) *Tensor {
	oh, ow := convCheck("Conv2dGradWeightBias", x.shape, dw.shape, stride, pad)
	if want := []int{x.shape[0], dw.shape[0], oh, ow}; !shapeEq(dy.shape, want) {
		panic(fmt.Sprintf("tensor: Conv2dGradWeightBias: dy %s, want %s", fmtShape(dy.shape), fmtShape(want)))
	}
	if len(db.shape) != 1 || db.shape[0] != dw.shape[0] {
		panic(fmt.Sprintf("tensor: Conv2dGradWeightBias: db %s for weight %s", fmtShape(db.shape), fmtShape(dw.shape)))
	}
	exec(Op{Kind: OpConv2dGradWeight, Stride: stride, Pad: pad, Beta: beta}, dw, x, dy, db)
	return dw
}

// Conv2dGradWeight sets dw = Σ_n ∂(conv2d(x, w))/∂w · dy + beta·dw: the
// gradient of Conv2d with respect to its weight, whose shape dw has.
func Conv2dGradWeight(dw, x, dy *Tensor, stride, pad int, beta float32) *Tensor {
	oh, ow := convCheck("Conv2dGradWeight", x.shape, dw.shape, stride, pad)
	if want := []int{x.shape[0], dw.shape[0], oh, ow}; !shapeEq(dy.shape, want) {
		panic(fmt.Sprintf("tensor: Conv2dGradWeight: dy %s, want %s", fmtShape(dy.shape), fmtShape(want)))
	}
	exec(Op{Kind: OpConv2dGradWeight, Stride: stride, Pad: pad, Beta: beta}, dw, x, dy)
	return dw
}
