package hold

import (
	"math"
	"testing"
)

// TestEstimateWeights checks the defining equations of the GLS weights with the kernel's Σ_t (not its
// Cholesky factor, which EstimateWeights uses): unbiased, aᵀm = 1, and optimal, Σa = m/(mᵀΣ⁻¹m) =
// m·(aᵀΣa), for HOLD-2/3/4, CLD and VP over t from 1e-2 to T; for n = 1 a = 1/m exactly.
func TestEstimateWeights(t *testing.T) {
	for _, cfg := range []Config{DefaultConfig(KindHOLD), {Kind: KindHOLD, Order: 2, L: 1, Alpha: 0.1, Beta: 1, T: 5, TMin: 1e-5, Objective: ObjectiveBCSM},
		{Kind: KindHOLD, Order: 4, L: 2, Alpha: 0.02, Beta: 1, T: 7, TMin: 1e-5, Objective: ObjectiveBCSM}, DefaultConfig(KindCLD), DefaultConfig(KindVP)} {
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range []float64{1e-2, 0.03, 0.1, 0.3, 1, 0.7 * cfg.T} {
			a := s.EstimateWeights(tt)
			k := s.ObjectiveKernel(tt)
			n := s.Blocks()
			am, aSa := 0.0, 0.0
			sa := make([]float64, n)
			for i := range n {
				am += a[i] * k.Mean.At(i, 0)
				for j := range n {
					sa[i] += k.Sigma.At(i, j) * a[j]
				}
			}
			for i := range n {
				aSa += a[i] * sa[i]
			}
			if !(math.Abs(am-1) <= 1e-9) {
				t.Errorf("%s order %d, t=%g: aᵀm = %.15g, want 1", cfg.Kind, n, tt, am)
			}
			for i := range n {
				want := k.Mean.At(i, 0) * aSa
				if !(math.Abs(sa[i]-want) <= 1e-7*(math.Abs(want)+math.Sqrt(k.Sigma.At(i, i)*aSa))) {
					t.Errorf("%s order %d, t=%g: (Σa)[%d] = %.10g, want m·aᵀΣa = %.10g", cfg.Kind, n, tt, i, sa[i], want)
				}
			}
			if n == 1 && !(math.Abs(a[0]*k.Mean.At(0, 0)-1) <= 1e-14) {
				t.Errorf("%s t=%g: a = %v, want 1/m = %v", cfg.Kind, tt, a[0], 1/k.Mean.At(0, 0))
			}
		}
	}
}
