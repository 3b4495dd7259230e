package cuda

import "math"

// The suite's comparisons against Go references: the tensor op list is checked against
// tensor.Reference, the training step's kernels against the CPU device, the HOLD kernels against
// package hold.

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
