package autograd

import (
	"fmt"

	"holdgo/rng"
	"holdgo/tensor"
)

// Image ops on the tape: convolution, group normalisation, FIR resampling and
// dropout (attention.go holds softmax and spatial attention). Shapes are NCHW.

// Conv2d returns conv2d(x, w) + b for x (N, C, H, W), w (O, C, KH, KW) and
// b (O), (N, O) (a per-sample bias, added in the convolution's output pass)
// or nil; the weight and bias gradients go straight into their buffers.
func (g *Tape) Conv2d(x, w, b *Value, stride, pad int) *Value {
	return g.conv2d(x, w, b, nil, stride, pad)
}

// Conv2dTwoBias is Conv2d with a per-channel bias b (O) and a per-sample bias
// sb (N, O), added as b + sb (tensor.Conv2dTwoBias): NCSN++'s Conv_0 with the
// time embedding, without a separate node for the sum of the two. b's gradient
// comes from the weight gradient's pass, sb's is Σ_p dy.
func (g *Tape) Conv2dTwoBias(x, w, b, sb *Value, stride, pad int) *Value {
	return g.conv2d(x, w, b, sb, stride, pad)
}

func (g *Tape) conv2d(x, w, b, sb *Value, stride, pad int) *Value {
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 4 || len(ws) != 4 {
		panic(fmt.Sprintf("autograd: Conv2d of %v with weight %v", xs, ws))
	}
	shape := []int{xs[0], ws[0], tensor.ConvOutSize(xs[2], ws[2], stride, pad), tensor.ConvOutSize(xs[3], ws[3], stride, pad)}
	inputs := []*Value{x, w}
	var y *tensor.Tensor
	switch {
	case sb != nil:
		inputs = append(inputs, b, sb)
		y = tensor.Conv2dTwoBias(g.out(shape...), x.T, w.T, b.T, sb.T, stride, pad)
	case b != nil:
		inputs = append(inputs, b)
		y = tensor.Conv2d(g.out(shape...), x.T, w.T, b.T, stride, pad)
	default:
		y = tensor.Conv2d(g.out(shape...), x.T, w.T, nil, stride, pad)
	}
	return g.record("Conv2d", y, func(dy *tensor.Tensor) {
		g.convBackward(x, w, b, sb, dy, shape, stride, pad)
	}, inputs...).save(x.T, w.T)
}

// Conv2dResidual returns (r + conv2d(x, w) + b)·s, b (O): a convolution ending
// in a residual join and its scale (tensor.Conv2dResidual; NCSN++'s
// (x + h)/√2 after a ResnetBlock's Conv_1) as one node.
func (g *Tape) Conv2dResidual(x, w, b, r *Value, s float32, stride, pad int) *Value {
	xs, ws := x.Shape(), w.Shape()
	if len(xs) != 4 || len(ws) != 4 {
		panic(fmt.Sprintf("autograd: Conv2dResidual of %v with weight %v", xs, ws))
	}
	shape := []int{xs[0], ws[0], tensor.ConvOutSize(xs[2], ws[2], stride, pad), tensor.ConvOutSize(xs[3], ws[3], stride, pad)}
	y := tensor.Conv2dResidual(g.out(shape...), x.T, w.T, b.T, r.T, s, stride, pad)
	return g.record("Conv2dResidual", y, func(dy *tensor.Tensor) {
		// ∂y/∂h = ∂y/∂r = s: d = s·dy is r's gradient. Where r has none yet, d is written straight
		// into it and the convolution's backward reads it there (no copy); else into a temporary
		// that is then added.
		if r.needsGrad && r != x { // (r = x: the input gradient would read and write one buffer)
			if gr, beta := g.gradDest(r); beta == 0 {
				d := tensor.MulScalar(gr, dy, s)
				g.convBackward(x, w, b, nil, d, shape, stride, pad)
				return
			}
		}
		d := tensor.MulScalar(g.tmp(dy.Shape()...), dy, s)
		g.convBackward(x, w, b, nil, d, shape, stride, pad)
		g.accum(r, d)
	}, x, w, b, r).save(x.T, w.T)
}

// convBackward adds the gradients of conv2d(x, w) + b (+ sb) for the output gradient dy.
func (g *Tape) convBackward(x, w, b, sb *Value, dy *tensor.Tensor, shape []int, stride, pad int) {
	if x.needsGrad {
		gx, beta := g.gradDest(x)
		tensor.Conv2dGradInput(gx, dy, w.T, stride, pad, beta)
	}
	fused := false // a per-channel bias's gradient from the weight gradient's pass over dy
	if w.needsGrad {
		gw, beta := g.gradDest(w)
		if b != nil && b.needsGrad && len(b.Shape()) == 1 {
			gb, betaB := g.gradDest(b)
			if betaB == 0 { // a new gradient: the op adds into it
				tensor.Fill(gb, 0)
			}
			tensor.Conv2dGradWeightBias(gw, gb, x.T, dy, stride, pad, beta)
			fused = true
		} else {
			tensor.Conv2dGradWeight(gw, x.T, dy, stride, pad, beta)
		}
	}
	if b != nil && b.needsGrad && !fused {
		if len(b.Shape()) == 2 { // per sample
			g.accum(b, tensor.Sum(g.tmp(shape[0], shape[1], 1, 1), dy, 2, 3).Reshape(shape[0], shape[1]))
		} else {
			g.accum(b, tensor.Sum(g.tmp(1, shape[1], 1, 1), dy, 0, 2, 3).Reshape(shape[1]))
		}
	}
	if sb != nil && sb.needsGrad { // Σ_p dy, written straight into a new gradient
		if gs, beta := g.gradDest(sb); beta == 0 {
			tensor.Sum(gs.Reshape(shape[0], shape[1], 1, 1), dy, 2, 3)
		} else {
			tensor.Add(gs, gs, tensor.Sum(g.tmp(shape[0], shape[1], 1, 1), dy, 2, 3).Reshape(shape[0], shape[1]))
		}
	}
}

// GroupNorm normalises x (N, C, …) over groups of C/groups channels and
// applies the per-channel scale gamma and shift beta. Its backward pass is
// one op (tensor.GroupNormBackward): dx, dγ and dβ from one pass over x and
// dy, straight into the gradients.
func (g *Tape) GroupNorm(x, gamma, beta *Value, groups int, eps float32) *Value {
	y := tensor.GroupNorm(g.out(x.Shape()...), x.T, gamma.T, beta.T, groups, eps)
	return g.record("GroupNorm", y, func(dy *tensor.Tensor) {
		dx, keep, dgamma, dbeta := g.groupNormGrads(x, gamma, beta)
		tensor.GroupNormBackward(dx, x.T, gamma.T, dy, dgamma, dbeta, groups, eps, keep)
	}, x, gamma, beta).save(x.T, gamma.T)
}

// GroupNormSiLU is SiLU(GroupNorm(x, gamma, beta)) as one node: one pass over
// x forward, and the normalised values are not kept (the backward op,
// tensor.GroupNormSiLUBackward, recomputes them from x).
func (g *Tape) GroupNormSiLU(x, gamma, beta *Value, groups int, eps float32) *Value {
	y := tensor.GroupNormSiLU(g.out(x.Shape()...), x.T, gamma.T, beta.T, groups, eps)
	return g.record("GroupNormSiLU", y, func(dy *tensor.Tensor) {
		dx, keep, dgamma, dbeta := g.groupNormGrads(x, gamma, beta)
		tensor.GroupNormSiLUBackward(dx, x.T, gamma.T, beta.T, dy, dgamma, dbeta, groups, eps, keep)
	}, x, gamma, beta).save(x.T, gamma.T, beta.T)
}

// GroupNormSiLUDropout is DropoutFrom(GroupNormSiLU(x, gamma, beta), p, s, first) as one node
// (tensor.GroupNormSiLUDropout): the dropout's mask is applied as the fused op writes its output,
// and the backward op (tensor.GroupNormSiLUDropoutBackward) regenerates it as it reads dy, so
// neither pass writes or reads the tensor between the two. With p = 0 or s nil (evaluation) it is
// GroupNormSiLU.
func (g *Tape) GroupNormSiLUDropout(x, gamma, beta *Value, groups int, eps float32, p float64, s *rng.Stream, first int) *Value {
	if p <= 0 || s == nil {
		return g.GroupNormSiLU(x, gamma, beta, groups, eps)
	}
	st, at := *s, uint64(first)
	y := tensor.GroupNormSiLUDropout(g.out(x.Shape()...), x.T, gamma.T, beta.T, groups, eps, st, p, at)
	return g.record("GroupNormSiLUDropout", y, func(dy *tensor.Tensor) {
		dx, keep, dgamma, dbeta := g.groupNormGrads(x, gamma, beta)
		tensor.GroupNormSiLUDropoutBackward(dx, x.T, gamma.T, beta.T, dy, dgamma, dbeta, groups, eps, keep, st, p, at)
	}, x, gamma, beta).save(x.T, gamma.T, beta.T)
}

// groupNormGrads returns where a group-norm backward op writes: x's gradient
// and the factor its old contents are kept with, and the gradients of gamma
// and beta, which the op adds into. An input that takes no gradient gets
// scratch memory, written and never read.
func (g *Tape) groupNormGrads(x, gamma, beta *Value) (dx *tensor.Tensor, keep float32, dgamma, dbeta *tensor.Tensor) {
	grad := func(v *Value) *tensor.Tensor {
		if v.needsGrad {
			return g.grad(v)
		}
		return g.tmp(v.Shape()...)
	}
	if x.needsGrad {
		dx, keep = g.gradDest(x)
	} else {
		dx = g.tmp(x.Shape()...)
	}
	return dx, keep, grad(gamma), grad(beta)
}

// UpFIRDn2d resamples x (N, C, H, W) with the [1,3,3,1] FIR kernel
// (tensor.FIRUpsample, FIRDownsample, FIRBlur); its gradient is the adjoint
// resampling, so H and W must give the same adjoint geometry (square images).
func (g *Tape) UpFIRDn2d(x *Value, geom tensor.FIRGeom) *Value {
	h, w := x.Shape()[2], x.Shape()[3]
	adj := geom.Adjoint(h)
	if adj != geom.Adjoint(w) {
		panic(fmt.Sprintf("autograd: UpFIRDn2d of %v: height and width need different adjoints", x.Shape()))
	}
	y := tensor.UpFIRDn2d(g.out(x.Shape()[0], x.Shape()[1], geom.OutSize(h), geom.OutSize(w)), x.T, geom)
	return g.record("UpFIRDn2d", y, func(dy *tensor.Tensor) {
		g.accum(x, tensor.UpFIRDn2d(g.tmp(x.Shape()...), dy, adj))
	}, x)
}

// Dropout zeroes each element of x with probability p and scales the rest by
// 1/(1−p) (inverted dropout), with the mask of the counter-based stream s
// (rng.Stream.Dropout): on a device the fused dropout kernel regenerates the
// mask from its counters in the forward and the backward pass, so no mask is
// stored or uploaded. With p = 0 or s nil (evaluation) it returns x.
func (g *Tape) Dropout(x *Value, p float64, s *rng.Stream) *Value { return g.DropoutFrom(x, p, s, 0) }

// DropoutFrom is Dropout with the mask elements first, first+1, … of s (rng.Stream.DropoutFrom):
// x is the part of a larger tensor that starts at element first (a data-parallel rank's samples).
func (g *Tape) DropoutFrom(x *Value, p float64, s *rng.Stream, first int) *Value {
	if p <= 0 || s == nil {
		return x
	}
	st := *s
	y := g.out(x.Shape()...)
	g.dropout(y, x.T, st, p, first)
	return g.record("Dropout", y, func(dy *tensor.Tensor) {
		gx, beta := g.gradDest(x)
		if beta == 0 {
			g.dropout(gx, dy, st, p, first)
			return
		}
		tensor.Add(gx, gx, g.dropout(g.tmp(x.Shape()...), dy, st, p, first))
	}, x)
}

// dropout sets y = x·mask on x's device (tensor.Dropout: the fused op regenerates the mask from
// its counters) and returns y.
func (g *Tape) dropout(y, x *tensor.Tensor, s rng.Stream, p float64, first int) *tensor.Tensor {
	return tensor.Dropout(y, x, s, p, uint64(first))
}
