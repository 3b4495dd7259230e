package tensor

import "math"

// expf is a float32 exp accurate to a few ulp: x = k·ln2 + r with
// |r| ≤ ln2/2, e^r by its degree-7 Taylor polynomial (truncation < 1e-8
// relative), and 2^k put into the exponent bits. It is several times faster
// than math.Exp and is what the element-wise kernels (exp, sigmoid, SiLU) use.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693145751953125 // ln 2 split so that k·ln2hi is exact
		ln2lo = 1.42860682030941723212e-6
	)
	switch {
	case x != x:
		return x
	case x > 88.72283:
		return float32(math.Inf(1))
	case x < -87.0: // result near or below the normal range: rare, use the slow path
		return float32(math.Exp(float64(x)))
	}
	// Round x·log2e to the nearest integer by adding 1.5·2^23: the integer
	// lands in the low mantissa bits of t.
	const magic = 12582912
	t := x*log2e + magic
	ki := int32(math.Float32bits(t)) - 0x4B400000
	k := t - magic
	r := x - k*ln2hi - k*ln2lo
	p := 1 + r*(1+r*(1./2+r*(1./6+r*(1./24+r*(1./120+r*(1./720+r*(1./5040)))))))
	if ki > 127 { // e^x just below MaxFloat32: 2^k itself overflows
		return 2 * p * math.Float32frombits(uint32(ki+126)<<23)
	}
	return p * math.Float32frombits(uint32(ki+127)<<23)
}

// sigmoidf is 1/(1+e^{-x}) in float32.
func sigmoidf(x float32) float32 { return 1 / (1 + expf(-x)) }
