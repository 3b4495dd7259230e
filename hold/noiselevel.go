package hold

import (
	"fmt"
	"math"
)

// The noise level of the sufficient statistic.
//
// Per data dimension the state u (n blocks) has the marginal kernel u_t | q0 ~ N(m_t q0, Σ_t), with
// m_t the q0 column of Kernel(t).Mean. With L_t = chol(Σ_t) and a_t = L_t⁻¹m_t, the whitened state is
// N(a_t q0, I), so the likelihood of q0 depends on u only through c_t = m_tᵀΣ_t⁻¹u/|a_t|², and
//
//	c_t | q0 ~ N(q0, σ_t²),   σ_t = (m_tᵀΣ_t⁻¹m_t)^(−1/2) = 1/|L_t⁻¹m_t|.
//
// σ_t is the one number that says how noisy an SDE's state is at t, comparable across SDEs: VP's is
// σ_t/α_t, VE's its σ(t), HOLD-n's grows like t^(n−1/2) or faster at small t because noise reaches the
// data block only through the auxiliary blocks (docs/samplers.md, "The aligned gauge").

// NoiseLevel returns σ_t = (m_tᵀΣ_t⁻¹m_t)^(−1/2) at forward time t > 0, in float64 from the kernel's
// Cholesky factor (a = L⁻¹m by forward substitution). It returns NaN where the kernel is not usable
// (a covariance that is not positive definite in float64).
func (s *SDE) NoiseLevel(t float64) float64 {
	k := s.Kernel(t)
	var a [MaxBlocks]float64
	var snr float64
	for i := 0; i < s.n; i++ {
		v := k.Mean.At(i, 0)
		for j := 0; j < i; j++ {
			v -= k.Chol.At(i, j) * a[j]
		}
		d := k.Chol.At(i, i)
		if !(d > 0) {
			return math.NaN()
		}
		a[i] = v / d
		snr += a[i] * a[i]
	}
	if !(snr > 0) || math.IsInf(snr, 0) {
		return math.NaN()
	}
	return 1 / math.Sqrt(snr)
}

// SigmaMap is σ_t on [TLo, THi] and its inverse t(σ), tabulated once per SDE and interpolated in
// float64: cubic Hermite interpolation of ln σ against ln t on SigmaMapNodes nodes evenly spaced in
// ln t, with the exact slope d ln σ/d ln t at every node (a five-point central difference of NoiseLevel with
// steps of 10⁻³ in ln t). The inverse interpolates ln t against ln σ through the same nodes with the
// reciprocal slopes. Both directions agree with NoiseLevel to about 10⁻¹⁰ relative (TestSigmaMap).
//
// σ_t increases with t for every SDE of the family; where float64 cannot resolve it — the first
// nodes after t_min if the kernel's covariance there is too small to factor, or a ln σ that does not
// increase from node to node — the map starts after the last such node, and TLo says where. With the
// default parameters no SDE loses a node: HOLD-4's σ at t_min = 10⁻⁵ is about 10⁻¹⁸, its covariance
// about 10⁻³⁵, and both are still resolved (the closed and double-double kernels are free of
// cancellation there).
type SigmaMap struct {
	TLo, THi float64 // the times the map covers: [TLo, THi] ⊆ [t_min, T]

	lnT0, h    float64   // node i is at ln t = lnT0 + i·h
	lnS, slope []float64 // ln σ and d ln σ / d ln t at the nodes
}

// SigmaMapNodes is the number of nodes of a SigmaMap.
const SigmaMapNodes = 4097

// NewSigmaMap tabulates the SDE's σ_t on [t_min, T].
func (s *SDE) NewSigmaMap() (*SigmaMap, error) {
	lo, hi := math.Log(s.MinTime()), math.Log(s.Horizon())
	n := SigmaMapNodes
	m := &SigmaMap{lnT0: lo, h: (hi - lo) / float64(n-1), lnS: make([]float64, n), slope: make([]float64, n)}
	const delta = 1e-3
	lnSigma := func(lt float64) float64 { return math.Log(s.NoiseLevel(math.Exp(lt))) }
	first := 0
	for i := range n {
		lt := lo + float64(i)*m.h
		if i == n-1 {
			lt = hi
		}
		s0 := s.NoiseLevel(math.Exp(lt))
		m.lnS[i] = math.Log(s0)
		// Five-point central difference: truncation error δ⁴/30·f⁽⁵⁾.
		m.slope[i] = (8*(lnSigma(lt+delta)-lnSigma(lt-delta)) - (lnSigma(lt+2*delta) - lnSigma(lt-2*delta))) / (12 * delta)
		ok := s0 > 0 && !math.IsInf(s0, 0) && m.slope[i] > 0 && !math.IsInf(m.slope[i], 0)
		if ok && i > 0 && !(m.lnS[i] > m.lnS[i-1]) {
			ok = false
		}
		if !ok {
			first = i + 1
		}
	}
	if first >= n-1 {
		return nil, fmt.Errorf("hold: the noise level σ_t of %s is not increasing in float64 on [%g, %g]", s.cfg.Kind, s.MinTime(), s.Horizon())
	}
	if first > 0 {
		m.lnT0 += float64(first) * m.h
		m.lnS, m.slope = m.lnS[first:], m.slope[first:]
	}
	m.TLo, m.THi = math.Exp(m.lnT0), s.Horizon()
	if first == 0 {
		m.TLo = s.MinTime()
	}
	return m, nil
}

// Range returns σ at TLo and THi.
func (m *SigmaMap) Range() (lo, hi float64) {
	return math.Exp(m.lnS[0]), math.Exp(m.lnS[len(m.lnS)-1])
}

// Sigma returns σ_t for t in [TLo, THi] (clamped to that range).
func (m *SigmaMap) Sigma(t float64) float64 {
	x := (math.Log(t) - m.lnT0) / m.h
	last := len(m.lnS) - 1
	switch {
	case !(x > 0):
		return math.Exp(m.lnS[0])
	case x >= float64(last):
		return math.Exp(m.lnS[last])
	}
	i := int(x)
	if i >= last {
		i = last - 1
	}
	return math.Exp(hermite(x-float64(i), m.lnS[i], m.lnS[i+1], m.h*m.slope[i], m.h*m.slope[i+1]))
}

// Time returns the t in [TLo, THi] at which σ_t = sigma (sigma is clamped to Range).
func (m *SigmaMap) Time(sigma float64) float64 {
	y := math.Log(sigma)
	last := len(m.lnS) - 1
	switch {
	case !(y > m.lnS[0]):
		return m.TLo
	case y >= m.lnS[last]:
		return m.THi
	}
	// The node interval [i, i+1] that holds y: lnS increases.
	lo, hi := 0, last
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if m.lnS[mid] <= y {
			lo = mid
		} else {
			hi = mid
		}
	}
	i := lo
	dy := m.lnS[i+1] - m.lnS[i]
	// ln t against ln σ: the inverse's slopes are 1/slope, in units of the interval's width dy.
	lt := m.lnT0 + m.h*float64(i) + hermite((y-m.lnS[i])/dy, 0, m.h, dy/m.slope[i], dy/m.slope[i+1])
	return min(max(math.Exp(lt), m.TLo), m.THi)
}

// hermite evaluates the cubic Hermite interpolant on [0, 1] with values y0, y1 and derivatives d0, d1
// (per unit of the parameter) at u.
func hermite(u, y0, y1, d0, d1 float64) float64 {
	u2 := u * u
	u3 := u2 * u
	return (2*u3-3*u2+1)*y0 + (u3-2*u2+u)*d0 + (-2*u3+3*u2)*y1 + (u3-u2)*d1
}
