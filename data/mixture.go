package data

import (
	"fmt"
	"math"
	"slices"

	"holdgo/hold"
	"holdgo/tensor"
)

// Mixture is a mixture of isotropic Gaussians in Dim dimensions:
//
//	p(x) = Σ_k w_k N(x; μ_k, σ_k² I)
//
// Weights and Stds hold one value per component; Means holds one point per
// component, row-major (component k is Means[k*Dim : (k+1)*Dim]). Weights
// are used divided by their sum.
//
// Methods panic when called with a Mixture that Validate rejects or with
// arguments of the wrong size: those are programming errors.
type Mixture struct {
	Weights []float64
	Means   []float64
	Stds    []float64
	Dim     int
}

// PaperMixture returns the paper's 1-D target (Appendix "Generate Data from
// 1D Gaussian Mixtures"):
//
//	0.34 N(−0.6575, 0.01²) + 0.33 N(0.2474, 0.02²) + 0.33 N(0.8002, 0.01²).
//
// The numbers live in one place, hold.PaperMixture, whose oracle scores
// are exact for this law.
func PaperMixture() Mixture { return FromHold(hold.PaperMixture()) }

// FromHold converts the hold package's mixture description.
func FromHold(h hold.Mixture) Mixture {
	m := Mixture{Weights: append([]float64(nil), h.Weights...), Stds: append([]float64(nil), h.Stds...), Dim: h.Dim()}
	for _, mu := range h.Means {
		m.Means = append(m.Means, mu...)
	}
	return m
}

// Hold converts the mixture to the hold package's description, from which
// hold.NewMixtureOracle builds exact scores.
func (m Mixture) Hold() hold.Mixture {
	h := hold.Mixture{Weights: append([]float64(nil), m.Weights...), Stds: append([]float64(nil), m.Stds...)}
	for k := range m.Weights {
		h.Means = append(h.Means, append([]float64(nil), m.Means[k*m.Dim:(k+1)*m.Dim]...))
	}
	return h
}

// NameGMM1D is the name of the paper's 1-D mixture (see Open).
const NameGMM1D = "gmm1d"

// Validate reports whether the fields describe a mixture.
func (m Mixture) Validate() error {
	k := len(m.Weights)
	switch {
	case m.Dim < 1:
		return fmt.Errorf("mixture: Dim %d < 1", m.Dim)
	case k == 0:
		return fmt.Errorf("mixture: no components")
	case len(m.Stds) != k:
		return fmt.Errorf("mixture: %d weights but %d stds", k, len(m.Stds))
	case len(m.Means) != k*m.Dim:
		return fmt.Errorf("mixture: %d means for %d components of dimension %d (want %d)", len(m.Means), k, m.Dim, k*m.Dim)
	}
	sum := 0.0
	for i, w := range m.Weights {
		if !(w >= 0) || math.IsInf(w, 0) {
			return fmt.Errorf("mixture: weight %d is %v", i, w)
		}
		sum += w
	}
	if !(sum > 0) {
		return fmt.Errorf("mixture: weights sum to %v", sum)
	}
	for i, s := range m.Stds {
		if !(s > 0) || math.IsInf(s, 0) {
			return fmt.Errorf("mixture: std %d is %v", i, s)
		}
	}
	return nil
}

func (m Mixture) mustValid() {
	if err := m.Validate(); err != nil {
		panic("data: " + err.Error())
	}
}

// Components is the number of components.
func (m Mixture) Components() int { return len(m.Weights) }

// Name implements Source.
func (m Mixture) Name() string {
	p := PaperMixture()
	if m.Dim == p.Dim && slices.Equal(m.Weights, p.Weights) && slices.Equal(m.Means, p.Means) && slices.Equal(m.Stds, p.Stds) {
		return NameGMM1D
	}
	return fmt.Sprintf("mixture%dd-%d", m.Dim, len(m.Weights))
}

// Dimension implements Source: the field Dim.
func (m Mixture) Dimension() int { return m.Dim }

// logComponents writes log(w_k) + log N(x; μ_k, σ_k² I) for each component
// into dst and returns their log-sum-exp, log p(x).
func (m Mixture) logComponents(x []float64, dst []float64) float64 {
	if len(x) != m.Dim {
		panic(fmt.Sprintf("data: mixture point of length %d, Dim is %d", len(x), m.Dim))
	}
	sum := 0.0
	for _, w := range m.Weights {
		sum += w
	}
	d := float64(m.Dim)
	best := math.Inf(-1)
	for k, w := range m.Weights {
		mu := m.Means[k*m.Dim : (k+1)*m.Dim]
		s := m.Stds[k]
		sq := 0.0
		for i, v := range x {
			z := (v - mu[i]) / s
			sq += z * z
		}
		lp := math.Log(w/sum) - 0.5*sq - d*math.Log(s) - 0.5*d*math.Log(2*math.Pi)
		dst[k] = lp
		best = max(best, lp)
	}
	if math.IsInf(best, -1) {
		return best
	}
	acc := 0.0
	for _, lp := range dst {
		acc += math.Exp(lp - best)
	}
	return best + math.Log(acc)
}

// LogDensity returns log p(x) for a point x of length Dim, computed with a
// log-sum-exp so it stays finite far from every component.
func (m Mixture) LogDensity(x []float64) float64 {
	m.mustValid()
	buf := make([]float64, len(m.Weights))
	return m.logComponents(x, buf)
}

// Density returns p(x) for a point x of length Dim.
func (m Mixture) Density(x []float64) float64 { return math.Exp(m.LogDensity(x)) }

// Responsibilities writes the posterior probability of each component given
// x, p(k | x), into dst (length Components()).
func (m Mixture) Responsibilities(x []float64, dst []float64) {
	m.mustValid()
	if len(dst) != len(m.Weights) {
		panic(fmt.Sprintf("data: %d responsibilities for %d components", len(dst), len(m.Weights)))
	}
	lp := m.logComponents(x, dst)
	for k := range dst {
		dst[k] = math.Exp(dst[k] - lp)
	}
}

// Score writes ∇ₓ log p(x) into grad (length Dim):
// Σ_k p(k | x) (μ_k − x) / σ_k².
func (m Mixture) Score(x []float64, grad []float64) {
	if len(grad) != m.Dim {
		panic(fmt.Sprintf("data: score of length %d, Dim is %d", len(grad), m.Dim))
	}
	resp := make([]float64, len(m.Weights))
	m.Responsibilities(x, resp)
	clear(grad)
	for k, r := range resp {
		mu := m.Means[k*m.Dim : (k+1)*m.Dim]
		v := m.Stds[k] * m.Stds[k]
		for i := range grad {
			grad[i] += r * (mu[i] - x[i]) / v
		}
	}
}

func (m Mixture) must1D(what string) {
	m.mustValid()
	if m.Dim != 1 {
		panic(fmt.Sprintf("data: mixture %s needs Dim 1, have %d", what, m.Dim))
	}
}

// PDF returns the density of a 1-D mixture at x.
func (m Mixture) PDF(x float64) float64 {
	m.must1D("PDF")
	sum, p := 0.0, 0.0
	for k, w := range m.Weights {
		sum += w
		z := (x - m.Means[k]) / m.Stds[k]
		p += w * math.Exp(-0.5*z*z) / (m.Stds[k] * math.Sqrt(2*math.Pi))
	}
	return p / sum
}

// CDF returns P(X ≤ x) for a 1-D mixture.
func (m Mixture) CDF(x float64) float64 {
	m.must1D("CDF")
	sum, c := 0.0, 0.0
	for k, w := range m.Weights {
		sum += w
		c += w * NormalCDF((x-m.Means[k])/m.Stds[k])
	}
	return c / sum
}

// LowerPartial returns ∫_{−∞}^x CDF(t) dt = E[(x − X)⁺] for a 1-D mixture,
// in closed form: Σ_k w_k ((x − μ_k) Φ(z_k) + σ_k φ(z_k)), z_k = (x − μ_k)/σ_k.
// It is the antiderivative the exact Wasserstein distance to the mixture
// needs (metrics.W1Mixture).
func (m Mixture) LowerPartial(x float64) float64 {
	m.must1D("LowerPartial")
	sum, g := 0.0, 0.0
	for k, w := range m.Weights {
		sum += w
		s := m.Stds[k]
		z := (x - m.Means[k]) / s
		g += w * (s*z*NormalCDF(z) + s*normPDF(z))
	}
	return g / sum
}

// Mean returns the mixture mean (length Dim).
func (m Mixture) Mean() []float64 {
	m.mustValid()
	sum := 0.0
	for _, w := range m.Weights {
		sum += w
	}
	out := make([]float64, m.Dim)
	for k, w := range m.Weights {
		for i := range out {
			out[i] += w / sum * m.Means[k*m.Dim+i]
		}
	}
	return out
}

// Sample implements Source: len(dst)/Dim independent draws, each a
// component chosen by weight (one Float64) and then μ_k + σ_k·N(0, I)
// (Dim Normals).
func (m Mixture) Sample(rng *tensor.RNG, dst []float32) {
	m.mustValid()
	checkDst(m.Name(), dst, m.Dim)
	sum := 0.0
	for _, w := range m.Weights {
		sum += w
	}
	for row := 0; row < len(dst); row += m.Dim {
		u := rng.Float64() * sum
		k := 0
		for acc := m.Weights[0]; u >= acc && k < len(m.Weights)-1; {
			k++
			acc += m.Weights[k]
		}
		for i := range m.Dim {
			dst[row+i] = float32(m.Means[k*m.Dim+i] + m.Stds[k]*rng.Normal())
		}
	}
}

// NormalCDF is the standard normal distribution function Φ(z).
func NormalCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

func normPDF(z float64) float64 { return math.Exp(-0.5*z*z) / math.Sqrt(2*math.Pi) }
