package tensor

import "math"

// Plain reference kernels of the image ops (conv.go, norm.go, fir.go):
// direct loops over the definitions, float64 accumulation.

// convTap calls f for every (input index, weight index, output index) triple
// of a convolution with input shape xs, weight shape ws, output shape ys.
func convTap(xs, ws, ys []int, stride, pad int, f func(xi, wi, yi int)) {
	n, c, h, w := xs[0], xs[1], xs[2], xs[3]
	o, kh, kw := ws[0], ws[2], ws[3]
	oh, ow := ys[2], ys[3]
	for b := range n {
		for oc := range o {
			for oy := range oh {
				for ox := range ow {
					yi := ((b*o+oc)*oh+oy)*ow + ox
					for ic := range c {
						for ky := range kh {
							iy := oy*stride - pad + ky
							if iy < 0 || iy >= h {
								continue
							}
							for kx := range kw {
								ix := ox*stride - pad + kx
								if ix < 0 || ix >= w {
									continue
								}
								f(((b*c+ic)*h+iy)*w+ix, ((oc*c+ic)*kh+ky)*kw+kx, yi)
							}
						}
					}
				}
			}
		}
	}
}

func refConv2d(op Op, out *Tensor, in []*Tensor) {
	x, w, y := refData(in[0]), refData(in[1]), refData(out)
	acc := make([]float64, len(y))
	convTap(in[0].shape, in[1].shape, out.shape, op.Stride, op.Pad, func(xi, wi, yi int) {
		acc[yi] += float64(x[xi]) * float64(w[wi])
	})
	hw := out.shape[2] * out.shape[3]
	if op.Kind == OpConv2dResidual { // (r + conv + bias)·s
		b, r := refData(in[2]), refData(in[3])
		for i := range y {
			y[i] = float32((float64(r[i]) + acc[i] + float64(b[i/hw%len(b)])) * float64(op.Scalar))
		}
		return
	}
	for i := range y {
		if len(in) >= 3 {
			acc[i] += float64(refData(in[2])[i/hw%in[2].Len()]) // bias (O) or (N, O)
		}
		if len(in) == 4 {
			acc[i] += float64(refData(in[3])[i/hw%in[3].Len()]) // per-sample bias (N, O)
		}
		y[i] = float32(acc[i])
	}
}

func refConv2dGradInput(op Op, out *Tensor, in []*Tensor) {
	dy, w := in[0], in[1]
	dx, g, wd := refData(out), refData(dy), refData(w)
	acc := make([]float64, len(dx))
	convTap(out.shape, w.shape, dy.shape, op.Stride, op.Pad, func(xi, wi, yi int) {
		acc[xi] += float64(g[yi]) * float64(wd[wi])
	})
	for i := range dx {
		dx[i] = float32(acc[i] + float64(op.Beta)*float64(dx[i]))
	}
}

func refConv2dGradWeight(op Op, out *Tensor, in []*Tensor) {
	x, dy := in[0], in[1]
	dw, xd, g := refData(out), refData(x), refData(dy)
	acc := make([]float64, len(dw))
	convTap(x.shape, out.shape, dy.shape, op.Stride, op.Pad, func(xi, wi, yi int) {
		acc[wi] += float64(g[yi]) * float64(xd[xi])
	})
	for i := range dw {
		dw[i] = float32(acc[i] + float64(op.Beta)*float64(dw[i]))
	}
	if len(in) == 3 { // db += Σ_{n,p} dy
		db, p := refData(in[2]), dy.shape[2]*dy.shape[3]
		sum := make([]float64, len(db))
		for i, v := range g {
			sum[i/p%len(db)] += float64(v)
		}
		for o := range db {
			db[o] = float32(float64(db[o]) + sum[o])
		}
	}
}

// groupStats returns the mean and 1/√(var+eps) of every (sample, group).
func groupStats(x []float32, n, c, s, groups int, eps float64) (mean, rstd []float64) {
	size := c / groups * s
	mean, rstd = make([]float64, n*groups), make([]float64, n*groups)
	for i := range mean {
		var sum, sq float64
		for _, v := range x[i*size : (i+1)*size] {
			sum += float64(v)
		}
		mean[i] = sum / float64(size)
		for _, v := range x[i*size : (i+1)*size] {
			d := float64(v) - mean[i]
			sq += d * d
		}
		rstd[i] = 1 / math.Sqrt(sq/float64(size)+eps)
	}
	return mean, rstd
}

func refGroupNorm(op Op, out *Tensor, in []*Tensor) {
	x, o := refData(in[0]), refData(out)
	n, c := in[0].shape[0], in[0].shape[1]
	s := len(x) / max(n*c, 1)
	if n*c == 0 {
		return
	}
	mean, rstd := groupStats(x, n, c, s, op.Groups, float64(op.Scalar))
	cpg := c / op.Groups
	xhat := func(i int) (float64, int) { // normalised value and channel of element i
		ch := i / s % c
		ng := i/(s*c)*op.Groups + ch/cpg
		return (float64(x[i]) - mean[ng]) * rstd[ng], ch
	}
	switch op.Kind {
	case OpGroupNorm:
		gamma, beta := refData(in[1]), refData(in[2])
		for i := range x {
			h, ch := xhat(i)
			o[i] = float32(h*float64(gamma[ch]) + float64(beta[ch]))
		}
	case OpGroupNormSiLU: // z·σ(z), z = x̂·γ + β
		gamma, beta := refData(in[1]), refData(in[2])
		for i := range x {
			h, ch := xhat(i)
			z := h*float64(gamma[ch]) + float64(beta[ch])
			o[i] = float32(z / (1 + math.Exp(-z)))
		}
	case OpGroupNormBackward, OpGroupNormSiLUBackward:
		// dz = dy for GroupNorm, dy·σ(z)·(1 + z·(1 − σ(z))) with z = x̂·γ + β for
		// GroupNormSiLU; then per group, with g = dz·γ,
		// dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) (+ Beta·dx), and per channel
		// dγ += Σ dz·x̂, dβ += Σ dz over the batch and the positions.
		gamma, dy, grads := refData(in[1]), refData(in[2]), in[3:]
		var shift []float32
		if op.Kind == OpGroupNormSiLUBackward {
			shift, dy, grads = refData(in[2]), refData(in[3]), in[4:]
		}
		dz := make([]float64, len(x))
		for i := range x {
			dz[i] = float64(dy[i])
			if shift != nil {
				h, ch := xhat(i)
				z := h*float64(gamma[ch]) + float64(shift[ch])
				sg := 1 / (1 + math.Exp(-z))
				dz[i] *= sg * (1 + z*(1-sg))
			}
		}
		size := cpg * s
		for ng := range n * op.Groups {
			var mg, mgx float64
			for i := ng * size; i < (ng+1)*size; i++ {
				h, ch := xhat(i)
				gv := dz[i] * float64(gamma[ch])
				mg += gv
				mgx += gv * h
			}
			mg /= float64(size)
			mgx /= float64(size)
			for i := ng * size; i < (ng+1)*size; i++ {
				h, ch := xhat(i)
				gv := dz[i] * float64(gamma[ch])
				v := rstd[ng] * (gv - mg - h*mgx)
				if op.Beta != 0 {
					v += float64(op.Beta) * float64(o[i])
				}
				o[i] = float32(v)
			}
		}
		acc := make([]float64, 2*c)
		for i := range x {
			h, ch := xhat(i)
			acc[ch] += dz[i] * h
			acc[c+ch] += dz[i]
		}
		dgamma, dbeta := refData(grads[0]), refData(grads[1])
		for ch := range c {
			dgamma[ch] = float32(float64(dgamma[ch]) + acc[ch])
			dbeta[ch] = float32(float64(dbeta[ch]) + acc[c+ch])
		}
	}
}

// refGroupNormSiLUDropout runs the fused group norm + SiLU + dropout as the two ops it fuses:
// forward, OpGroupNormSiLU's reference then the dropout's loop (rng.Stream.DropoutFrom, OpDropout's
// reference) on its rounded output; backward, that loop on dy, then OpGroupNormSiLUBackward's
// reference on the masked gradient.
func refGroupNormSiLUDropout(op Op, out *Tensor, in []*Tensor) {
	p := op.Coef[0]
	gn := Op{Kind: OpGroupNormSiLU, Groups: op.Groups, Scalar: op.Scalar, Beta: op.Beta}
	if op.Kind == OpGroupNormSiLUDropout {
		refGroupNorm(gn, out, in)
		o := refData(out)
		op.Stream.DropoutFrom(o, o, p, op.First)
		return
	}
	gn.Kind = OpGroupNormSiLUBackward
	masked := newOn(Reference, in[3].shape)
	op.Stream.DropoutFrom(refData(masked), refData(in[3]), p, op.First)
	refGroupNorm(gn, out, []*Tensor{in[0], in[1], in[2], masked, in[4], in[5]})
}

func refSoftmax(op Op, out *Tensor, in []*Tensor) {
	o, a := refData(out), refData(in[0])
	k := out.shape[len(out.shape)-1]
	if k == 0 {
		return
	}
	s := float64(op.Scalar)
	for r := 0; r < len(o); r += k {
		row, dst := a[r:r+k], o[r:r+k]
		if op.Kind == OpSoftmaxGrad {
			dy := refData(in[1])[r : r+k]
			var dot float64
			for i, y := range row {
				dot += float64(y) * float64(dy[i])
			}
			for i, y := range row {
				dst[i] = float32(s * float64(y) * (float64(dy[i]) - dot))
			}
			continue
		}
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, s*float64(v))
		}
		var sum float64
		for _, v := range row {
			sum += math.Exp(s*float64(v) - m)
		}
		for i, v := range row {
			dst[i] = float32(math.Exp(s*float64(v)-m) / sum)
		}
	}
}

// refUpFIRDn2d is the two-dimensional definition, one output at a time.
func refUpFIRDn2d(op Op, out *Tensor, in []*Tensor) {
	x := in[0]
	o, a := refData(out), refData(x)
	h, w := x.shape[2], x.shape[3]
	oh, ow := out.shape[2], out.shape[3]
	planes := x.shape[0] * x.shape[1]
	for p := range planes {
		for oy := range oh {
			for ox := range ow {
				var s float64
				for jy := range 4 {
					u := oy*op.Down + jy - op.Pad
					if u < 0 || u%op.Up != 0 || u/op.Up >= h {
						continue
					}
					for jx := range 4 {
						v := ox*op.Down + jx - op.Pad
						if v < 0 || v%op.Up != 0 || v/op.Up >= w {
							continue
						}
						k := float64(FIRTaps[3-jy]) * float64(FIRTaps[3-jx])
						s += k * float64(a[(p*h+u/op.Up)*w+v/op.Up])
					}
				}
				o[(p*oh+oy)*ow+ox] = float32(s * float64(op.Scalar))
			}
		}
	}
}
