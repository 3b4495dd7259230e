package vec

import "math"

// The references: obviously correct plain Go, one loop per kernel. The
// transcendental ones evaluate in float64 and round once; the others spell
// out the float32 operations, each rounded (a float32(…) conversion forbids
// the compiler to fuse a product into a following sum, GOAMD64=v3 or not),
// in the order the kernels perform them. The generic level uses the
// arithmetic ones as they are.

func expRef(dst, x []float32) {
	for i, v := range x {
		dst[i] = float32(math.Exp(float64(v)))
	}
}

func sigmoid64(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func sigmoidRef(dst, x []float32) {
	for i, v := range x {
		dst[i] = float32(sigmoid64(float64(v)))
	}
}

// finite replaces ±Inf by ±MaxFloat64, so that the float64 formulas take
// their limits instead of computing Inf·0.
func finite(x float32) float64 {
	return max(-math.MaxFloat64, min(math.MaxFloat64, float64(x)))
}

func siluRef(dst, x []float32) {
	for i, v := range x {
		xf := finite(v)
		dst[i] = float32(xf * sigmoid64(xf))
	}
}

func siluGradRef(dst, x, dy []float32) {
	for i, v := range x {
		xf := finite(v)
		g := math.FMA(xf, sigmoid64(-xf), 1) // 1 + x·(1-σ(x)), σ(-x) without cancellation
		dst[i] = float32(float64(dy[i]) * sigmoid64(xf) * g)
	}
}

func tanhRef(dst, x []float32) {
	for i, v := range x {
		dst[i] = float32(math.Tanh(float64(v)))
	}
}

func addRef(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] + b[i]
	}
}

func subRef(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] - b[i]
	}
}

func mulRef(dst, a, b []float32) {
	for i := range dst {
		dst[i] = a[i] * b[i]
	}
}

func scaleRef(dst, a []float32, s float32) {
	for i := range dst {
		dst[i] = a[i] * s
	}
}

func addScalarRef(dst, a []float32, s float32) {
	for i := range dst {
		dst[i] = a[i] + s
	}
}

// affine64Ref is Affine64 in order: math.FMA is the exact fused
// multiply-add, as the kernels' VFMADD213PD.
func affine64Ref(dst, x []float32, a, c float64) {
	for i, v := range x {
		dst[i] = float32(math.FMA(a, float64(v), c))
	}
}

func addScaledRef(dst, a, b []float32, s float32) {
	for i := range dst {
		dst[i] = a[i] + float32(s*b[i])
	}
}

func emaRef(shadow, params []float32, k float32) {
	for i := range shadow {
		shadow[i] -= float32(k * (shadow[i] - params[i]))
	}
}

// adamRef is tensor.Adam's loop (the Reference device's) with c1 = 1-b1 and c2 = 1-b2 passed in.
func adamRef(params, grads, m, v []float32, b1, c1, b2, c2, stepSize, sqrtBC2, eps float32) {
	for i := range params {
		g := grads[i]
		m[i] = float32(b1*m[i]) + float32(c1*g)
		v[i] = float32(b2*v[i]) + float32(float32(c2*g)*g)
		denom := float32(math.Sqrt(float64(v[i])))/sqrtBC2 + eps
		params[i] -= float32(stepSize*m[i]) / denom
	}
}

func sumRef(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v)
	}
	return s
}

func sumSquaresRef(x []float32) float64 {
	var s float64
	for _, v := range x {
		s += float64(v) * float64(v)
	}
	return s
}

// sumSqDevRef is Σ(x[i] − m)² in float64, in order.
func sumSqDevRef(x []float32, m float64) float64 {
	var s float64
	for _, v := range x {
		d := float64(v) - m
		s += d * d
	}
	return s
}

// sumDotDevRef is Σdy[i] and Σdy[i]·(x[i] − m) in float64, in order.
func sumDotDevRef(dy, x []float32, m float64) (sum, dot float64) {
	for i, g := range dy {
		sum += float64(g)
		dot += float64(g) * (float64(x[i]) - m)
	}
	return sum, dot
}

// mixRef is Mix from element lo on: per element, every output row's
// float64 FMA chain over the inputs in order, all inputs read before the
// outputs are written (so an output row may be an input row).
func mixRef[T float32 | float64](out [][]T, coef []float64, in [][]T, lo int) {
	nin := len(in)
	var acc [MaxMixRows]float64
	for i := lo; i < len(in[0]); i++ {
		for r := range out {
			a := 0.0
			for j, x := range in {
				a = math.FMA(coef[r*nin+j], float64(x[i]), a)
			}
			acc[r] = a
		}
		for r, o := range out {
			o[i] = T(acc[r])
		}
	}
}
