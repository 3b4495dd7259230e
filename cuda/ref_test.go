package cuda

import "math"

// Plain Go references (float64 arithmetic) for the kernel families that have no reference
// elsewhere in the repository: softmax, group norm, im2col/col2im and upfirdn2d. The tensor op list
// is checked against tensor.Reference, Adam/EMA against package optim, the HOLD kernels against
// package hold.

func refSoftmax(x []float32, rows, cols int) []float32 {
	y := make([]float32, len(x))
	for r := range rows {
		row := x[r*cols : (r+1)*cols]
		m := math.Inf(-1)
		for _, v := range row {
			m = math.Max(m, float64(v))
		}
		var s float64
		for _, v := range row {
			s += math.Exp(float64(v) - m)
		}
		for j, v := range row {
			y[r*cols+j] = float32(math.Exp(float64(v)-m) / s)
		}
	}
	return y
}

func refSoftmaxBackward(y, dy []float32, rows, cols int) []float32 {
	dx := make([]float32, len(y))
	for r := range rows {
		var dot float64
		for j := range cols {
			dot += float64(dy[r*cols+j]) * float64(y[r*cols+j])
		}
		for j := range cols {
			i := r*cols + j
			dx[i] = float32(float64(y[i]) * (float64(dy[i]) - dot))
		}
	}
	return dx
}

func refGroupNorm(x, gamma, beta []float32, n, c, spatial, groups int, eps float64) (y, mean, rstd []float32) {
	y = make([]float32, len(x))
	mean, rstd = make([]float32, n*groups), make([]float32, n*groups)
	cpg := c / groups
	size := cpg * spatial
	for ni := range n {
		for g := range groups {
			base := (ni*c + g*cpg) * spatial
			var s, ss float64
			for j := range size {
				s += float64(x[base+j])
			}
			mu := s / float64(size)
			for j := range size {
				dlt := float64(x[base+j]) - mu
				ss += dlt * dlt
			}
			r := 1 / math.Sqrt(ss/float64(size)+eps)
			for j := range size {
				ch := g*cpg + j/spatial
				y[base+j] = float32((float64(x[base+j])-mu)*r*float64(gamma[ch]) + float64(beta[ch]))
			}
			mean[ni*groups+g], rstd[ni*groups+g] = float32(mu), float32(r)
		}
	}
	return
}

// refIm2Col unfolds x (n, c, h, w); with adjoint it folds col back into an image instead.
func refIm2Col(x, col []float32, n, c, h, w int, g Conv2D, adjoint bool) {
	g = g.norm()
	oh, ow := g.OutSize(h, w)
	if adjoint {
		clear(x)
	}
	for ni := range n {
		for ci := range c {
			for ky := range g.KH {
				for kx := range g.KW {
					row := (ci*g.KH+ky)*g.KW + kx
					for oy := range oh {
						for ox := range ow {
							iy, ix := oy*g.StrideH-g.PadH+ky*g.DilH, ox*g.StrideW-g.PadW+kx*g.DilW
							ci2 := ((ni*c*g.KH*g.KW+row)*oh+oy)*ow + ox
							inside := iy >= 0 && iy < h && ix >= 0 && ix < w
							xi := ((ni*c+ci)*h+iy)*w + ix
							switch {
							case adjoint && inside:
								x[xi] += col[ci2]
							case !adjoint && inside:
								col[ci2] = x[xi]
							case !adjoint:
								col[ci2] = 0
							}
						}
					}
				}
			}
		}
	}
}

// refUpFirDn2D follows StyleGAN2's upfirdn2d_ref: zero-insertion upsampling, padding, a true
// convolution with k, then decimation.
func refUpFirDn2D(x, k []float32, planes, h, w, kh, kw int, f FIR) []float32 {
	up, down := max(f.Up, 1), max(f.Down, 1)
	ph, pw := h*up+f.Pad0+f.Pad1, w*up+f.Pad0+f.Pad1
	oh, ow := f.OutSize(h, kh), f.OutSize(w, kw)
	y := make([]float32, planes*oh*ow)
	for p := range planes {
		pad := make([]float64, ph*pw)
		for i := range h {
			for j := range w {
				pad[(i*up+f.Pad0)*pw+j*up+f.Pad0] = float64(x[(p*h+i)*w+j])
			}
		}
		for oy := range oh {
			for ox := range ow {
				var s float64
				for jy := range kh {
					for jx := range kw {
						s += float64(k[(kh-1-jy)*kw+kw-1-jx]) * pad[(oy*down+jy)*pw+ox*down+jx]
					}
				}
				y[(p*oh+oy)*ow+ox] = float32(s)
			}
		}
	}
	return y
}

// nmse is the normalised mean squared error Σ(got−want)²/Σwant² (plain Σ(got−want)²/n when want
// is all zeros). A NaN or Inf in one and not the other at the same place is reported as +Inf.
func nmse(got, want []float32) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		gBad, wBad := math.IsNaN(g) || math.IsInf(g, 0), math.IsNaN(w) || math.IsInf(w, 0)
		if gBad || wBad {
			if gBad != wBad || (math.IsNaN(g) != math.IsNaN(w)) || (!math.IsNaN(g) && g != w) {
				return math.Inf(1)
			}
			continue
		}
		num += (g - w) * (g - w)
		den += w * w
	}
	if den == 0 {
		if len(got) == 0 {
			return 0
		}
		return num / float64(len(got))
	}
	return num / den
}
