package vec

import "math"

// Sin sets dst[i] = sin(x[i]) in float64 arithmetic: Cody–Waite reduction
// by π/2 with fdlibm's two-part constant (k·pio2Hi is exact for |x| < 2¹⁹),
// then Taylor polynomials of sin (to r⁹) and cos (to r¹⁰) on |r| ≤ π/4,
// truncation below 2·10⁻⁹, both evaluated and the quadrant's one picked
// without a branch on it. Larger or non-finite arguments go to math.Sin.
// Every level gives the same bits: the SIMD kernels (float64 lanes,
// asm_gen.go's writeSin64) perform sinRef's operations in its order, none
// fused. tensor's Sin (Fourier features) calls it.
func Sin(dst, x []float32) {
	same("Sin", len(dst), x)
	k := active()
	body := k.f64Body(len(x), k.sin64 != nil)
	if body > 0 && k.sin64(dst[:body], x[:body]) {
		// The kernel left the arguments it does not take in place (|x| ≥ 2¹⁹, NaN: never
		// within [−1, 1]).
		for i, v := range dst[:body] {
			if !(math.Abs(float64(v)) <= 1) {
				dst[i] = float32(math.Sin(float64(v)))
			}
		}
	}
	sinRef(dst[body:], x[body:])
}

// sinRef is the plain-Go kernel of Sin. The float64 conversions round every
// product before its sum (the Go spec's bar to fusing them into a multiply-
// add, which GOAMD64=v3 would otherwise allow): the SIMD kernels' order.
func sinRef(o, a []float32) {
	const (
		twoOverPi = 2 / math.Pi
		pio2Hi    = 1.57079632673412561417e+00 // fdlibm pio2_1: 33 bits of π/2
		pio2Lo    = 6.07710050650619224932e-11 // π/2 − pio2_1
	)
	for i, v := range a[:len(o)] {
		x := float64(v)
		if !(math.Abs(x) < 1<<19) {
			o[i] = float32(math.Sin(x))
			continue
		}
		k := math.RoundToEven(float64(x*twoOverPi)) + 0 // one ROUNDSD; + 0 turns k = -0 into +0 so that sin(-0) = -0
		r := float64(x-float64(k*pio2Hi)) - float64(k*pio2Lo)
		r2 := float64(r * r)
		sn := float64(r * float64(1+float64(r2*float64(-1.0/6+float64(r2*float64(1.0/120+float64(r2*float64(-1.0/5040+float64(r2*(1.0/362880))))))))))
		cs := float64(1 + float64(r2*float64(-0.5+float64(r2*float64(1.0/24+float64(r2*float64(-1.0/720+float64(r2*float64(1.0/40320-float64(r2*(1.0/3628800)))))))))))
		// Quadrant q = k mod 4: sin for even q, cos for odd, negated for
		// q ≥ 2, chosen with bit masks: branches on q, random from one
		// element to the next, cost 20 ns per element in mispredictions.
		q := uint64(int64(k))
		odd := -(q & 1) // all ones for odd q
		sb, cb := math.Float64bits(sn), math.Float64bits(cs)
		y := math.Float64frombits((sb ^ (sb^cb)&odd) ^ (q&2)<<62)
		o[i] = float32(y)
	}
}
