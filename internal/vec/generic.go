package vec

import "math"

// genericImpl is the plain-Go level: the references for the arithmetic
// kernels, and for the transcendental ones scalar versions of the assembly
// algorithms (same range reduction, polynomials and special-value handling,
// without FMA), several times faster than float64 math.
var genericImpl = impl{
	level: "generic",
	exp:   expGeneric, sigmoid: sigmoidGeneric, silu: siluGeneric, tanh: tanhGeneric,
	siluGrad: siluGradGeneric,
	add:      addRef, sub: subRef, mul: mulRef,
	scale: scaleRef, addScalar: addScalarRef, addScaled: addScaledRef,
	ema: emaRef, adam: adamRef,
	sum: sumRef, sumSquares: sumSquaresRef,
}

// expParts returns y = e^r and n with e^x = y·2^n, for x in [expLo, expHi]
// (NaN gives NaN y): n = round(x·log2e), r = x - n·ln2 in two steps, e^r
// from the polynomial.
func expParts(x float32) (y float32, n int32) {
	const magic = 0x1.8p23 // adding it rounds |t| < 2^22 to an integer
	k := float32(x*log2e+magic) - magic
	r := x - k*ln2Hi // exact
	r -= float32(k * ln2Lo)
	p := float32(float32(float32(float32(float32(expP0*r+expP1)*r+expP2)*r+expP3)*r+expP4)*r) + expP5
	return float32(float32(r*r)*p) + r + 1, int32(k)
}

// scale2 returns y·2^n for n in [-166, 128], rounding once: 2^n is
// applied as two normal factors.
func scale2(y float32, n int32) float32 {
	n1 := n >> 1
	return y * math.Float32frombits(uint32(n1+127)<<23) * math.Float32frombits(uint32(n-n1+127)<<23)
}

// negAbsClamp returns max(-|x|, lo), NaN staying NaN.
func negAbsClamp(x, lo float32) float32 {
	c := math.Float32frombits(math.Float32bits(x) | 1<<31)
	if c < lo {
		return lo
	}
	return c
}

func expGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		if v < expLo { // NaN falls through both
			v = expLo
		} else if v > expHi {
			v = expHi
		}
		y, n := expParts(v)
		dst[i] = scale2(y, n)
	}
}

func sigmoidGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		y, n := expParts(negAbsClamp(v, expLo))
		e := scale2(y, n) // e^-|x|
		num := float32(1)
		if v < 0 {
			num = e
		}
		dst[i] = num / (1 + e)
	}
}

func siluGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		c := negAbsClamp(v, expLo)
		y, n := expParts(c)
		d := 1 + scale2(y, n)
		if v < 0 { // x·e^x/(1+e^x), the 2^n last so that tiny results round once
			dst[i] = scale2(c*y/d, n)
		} else {
			dst[i] = v / d
		}
	}
}

func siluGradGeneric(dst, x, dy []float32) {
	dst, dy = dst[:len(x)], dy[:len(x)]
	for i, v := range x {
		y, n := expParts(negAbsClamp(v, gradLo))
		e := scale2(y, n) // e^-|x|
		r := 1 / (1 + e)
		sigPos, sigNeg, sc := r, e*r, int32(0) // σ(x), σ(-x), σ(x)'s 2^sc
		if v < 0 {
			sigPos, sigNeg, sc = y*r, r, n
		}
		xg := v
		if xg < gradLo {
			xg = gradLo
		} else if xg > gradHi {
			xg = gradHi
		}
		g := float32(xg*sigNeg) + 1
		if h := v - gradX0Hi - gradX0Lo; h > -gradWin && h < gradWin {
			q := float32(float32(float32(float32(float32(gradQ6*h+gradQ5)*h+gradQ4)*h+gradQ3)*h+gradQ2)*h+gradQ1)*h + gradQ0
			g = h * q
		}
		dst[i] = scale2(dy[i]*sigPos*g, sc)
	}
}

func tanhGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		a := math.Float32frombits(math.Float32bits(v) &^ (1 << 31))
		var t float32
		if a < tanhSmall {
			z := v * v
			p := float32(float32(float32(float32(tanhP0*z+tanhP1)*z+tanhP2)*z+tanhP3)*z) + tanhP4
			t = float32(float32(p*z)*v) + v
		} else {
			c := -2 * a
			if c < expLo {
				c = expLo
			}
			y, n := expParts(c)
			e := scale2(y, n)
			t = (1 - e) / (1 + e)
		}
		// sign(x): the large branch is |tanh|, and tanh(-0) = -0.
		dst[i] = math.Float32frombits(math.Float32bits(t) | math.Float32bits(v)&(1<<31))
	}
}
