// Package hold implements the linear block SDEs of HOLD-DGM and its baselines (HOLD-n, CLD, VP, VE):
// exact float64 perturbation kernels, the fused reparameterisation used for training, the BCSM/DSM
// objectives, everything a sampler needs (prior, drifts, the exact A-step of the Lie–Trotter
// splitting, the B-step) and exact scores of Gaussian-mixture data.
//
// Every instance is one abstraction. Per data dimension the state has n blocks (q, p, s, …); in
// normalised ("native") coordinates z and native time τ it follows
//
//	dz = F z dτ + √q e_n dW,   F + Fᵀ = −q·Λ e_n e_nᵀ,
//
// so that N(0, I) is stationary when Λ = 1 (HOLD-n, CLD, VP; VE has F = 0, Λ = 0). The SDE's own
// coordinates are x = c ⊙ z with one scale per block (c = 1/√L for HOLD, (1, √M) for CLD) and its time
// t maps to native time through a rate β(t): τ(t) = ∫₀ᵗ β. Batches are flat row-major slices of shape
// (B, n·d) with block k in columns [k·d, (k+1)·d).
//
// HOLD-3 has F = [[0, 1, 0], [−1, 0, √10], [0, −√10, −6]] and q = 12 (ξ = 6, γ = √10; eigenvalues −1, −2, −3).
// The kernel at native time τ is N(e^{τF}x_0, Σ_τ) with Σ_τ = I + e^{τF}(Σ_0 − I)e^{τFᵀ}, evaluated in float64
// without cancellation (closed form for HOLD-3, double-double series otherwise). The reverse drift splits
// into a linear part A with drift Fᵀ, solved exactly (AStep), and a last-block part B with the score
// (BStep). The paper's own derivation of the A-step has errors (its l₂₂ is a copy of l₁₁); here the
// A-step is the transposed forward kernel (docs/math.md#the-papers-a-operator).
//
// The maths, its derivation and its verification are in docs/math.md; comments in this package point at
// its sections.
package hold

import (
	"errors"
	"fmt"
	"math"
)

// SDE kinds.
const (
	KindHOLD = "hold"
	KindCLD  = "cld"
	KindVP   = "vp"
	KindVE   = "ve"
)

// Kinds are the SDE kinds, in the order holdctl lists them.
var Kinds = []string{KindHOLD, KindCLD, KindVP, KindVE}

// DefaultEndTime is the end time ε of the reverse process that the studies and figures use for an SDE
// kind: 1e-3 for HOLD and CLD, 1e-5 for VP and VE (VP with 1e-3 cannot resolve modes of width 0.01:
// they come out about 0.63× too narrow; docs/math.md#euler-maruyama-and-ode-steppers). 0 for an
// unknown kind.
func DefaultEndTime(kind string) float64 {
	switch kind {
	case KindHOLD, KindCLD:
		return 1e-3
	case KindVP, KindVE:
		return 1e-5
	}
	return 0
}

// Param is one parameter of an SDE kind, named as holdctl sde prints it.
type Param struct {
	Key   string
	Value float64
}

// Params lists the parameters that define the configuration's SDE kind, in print order (HOLD's β
// only when it is not 1, where it changes the kernel).
func (c Config) Params() []Param {
	switch c.Kind {
	case KindHOLD:
		if c.Beta != 1 {
			return []Param{{"L", c.L}, {"alpha", c.Alpha}, {"beta", c.Beta}}
		}
		return []Param{{"L", c.L}, {"alpha", c.Alpha}}
	case KindCLD:
		return []Param{{"beta", c.Beta}, {"m_inv", c.MInv}, {"friction", c.Friction}, {"gamma", c.Alpha}}
	case KindVP:
		return []Param{{"beta_min", c.BetaMin}, {"beta_max", c.BetaMax}}
	default:
		return []Param{{"sigma_min", c.SigmaMin}, {"sigma_max", c.SigmaMax}}
	}
}

// DefaultEndTimes is DefaultEndTime of every kind, as a map a study may override.
func DefaultEndTimes() map[string]float64 {
	ends := make(map[string]float64, len(Kinds))
	for _, k := range Kinds {
		ends[k] = DefaultEndTime(k)
	}
	return ends
}

// Training objectives.
const (
	// ObjectiveBCSM conditions on q0 only (b0 = {q0}): the auxiliary blocks p0, s0, … ~ N(0, α/L) are
	// marginalised into Σ_t. The network predicts the noise of the last block.
	ObjectiveBCSM = "bcsm"
	// ObjectiveHSM is CLD's name for the same objective with n = 2.
	ObjectiveHSM = "hsm"
	// ObjectiveDSM conditions on all blocks: p0, s0, … are sampled with variance α/L and Σ_0 = 0.
	ObjectiveDSM = "dsm"
)

// Config selects and parameterises an SDE. Start from DefaultConfig: zero is a meaningful value for
// several fields (Alpha), so New does not fill in defaults.
type Config struct {
	Kind  string // KindHOLD, KindCLD, KindVP or KindVE
	Order int    // blocks per data dimension: 2, 3 or 4 for HOLD; 2 for CLD; 1 for VP and VE

	// HOLD: prior N(0, I/L) for every block and initial auxiliary variance α/L (docs/math.md#the-sde-family).
	// CLD: Alpha is CLD-SGM's γ (v0 ~ N(0, γM)); in normalised coordinates the two coincide.
	L     float64
	Alpha float64

	// HOLD and CLD: constant time scale β (the drift and the noise variance are multiplied by β).
	Beta float64
	// CLD: inverse mass M⁻¹ and friction Γ (CLD-SGM: 4 and 1).
	MInv     float64
	Friction float64
	// VP: β(t) = BetaMin + t·(BetaMax − BetaMin).
	BetaMin, BetaMax float64
	// VE: σ(t) = SigmaMin·(SigmaMax/SigmaMin)^t.
	SigmaMin, SigmaMax float64

	T    float64 // horizon
	TMin float64 // smallest training time (t ~ U[TMin, T])

	Objective string // ObjectiveBCSM (default), ObjectiveHSM (CLD) or ObjectiveDSM
}

// DefaultConfig returns the reference parameters of an SDE kind: HOLD-3 with L = 2, α = 0.02, T = 7
// (docs/math.md#prior-and-horizon); CLD as CLD-SGM (β = 4, M⁻¹ = 4, Γ = 1, γ = 0.04, T = 1); VP (β 0.1…20, T = 1)
// and VE (σ 0.01…50, T = 1) as score_sde. TMin is 1e-5 for all.
func DefaultConfig(kind string) Config {
	c := Config{Kind: kind, TMin: 1e-5, T: 1, Objective: ObjectiveBCSM}
	switch kind {
	case KindHOLD:
		c.Order, c.L, c.Alpha, c.Beta, c.T = 3, 2, 0.02, 1, 7
	case KindCLD:
		c.Order, c.L, c.Alpha, c.Beta, c.MInv, c.Friction = 2, 1, 0.04, 4, 4, 1
		c.Objective = ObjectiveHSM
	case KindVP:
		c.Order, c.BetaMin, c.BetaMax = 1, 0.1, 20
	case KindVE:
		c.Order, c.SigmaMin, c.SigmaMax = 1, 0.01, 50
	}
	return c
}

// Validate reports the first invalid parameter.
func (c Config) Validate() error {
	positive := func(name string, v float64) error {
		if !(v > 0) || math.IsInf(v, 0) {
			return fmt.Errorf("%s must be positive and finite, got %g", name, v)
		}
		return nil
	}
	var errs []error
	switch c.Kind {
	case KindHOLD:
		if c.Order < 2 || c.Order > 4 {
			errs = append(errs, fmt.Errorf("HOLD order must be 2, 3 or 4, got %d", c.Order))
		}
		errs = append(errs, positive("L", c.L), positive("beta", c.Beta))
		if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
			errs = append(errs, fmt.Errorf("alpha must be ≥ 0 and finite, got %g", c.Alpha))
		}
	case KindCLD:
		if c.Order != 2 {
			errs = append(errs, fmt.Errorf("CLD has order 2, got %d", c.Order))
		}
		errs = append(errs, positive("beta", c.Beta), positive("m_inv", c.MInv), positive("friction", c.Friction))
		if !(c.Alpha >= 0) || math.IsInf(c.Alpha, 0) {
			errs = append(errs, fmt.Errorf("CLD gamma (alpha) must be ≥ 0 and finite, got %g", c.Alpha))
		}
	case KindVP:
		if c.Order != 1 {
			errs = append(errs, fmt.Errorf("VP has order 1, got %d", c.Order))
		}
		errs = append(errs, positive("beta_min", c.BetaMin), positive("beta_max", c.BetaMax))
	case KindVE:
		if c.Order != 1 {
			errs = append(errs, fmt.Errorf("VE has order 1, got %d", c.Order))
		}
		errs = append(errs, positive("sigma_min", c.SigmaMin), positive("sigma_max", c.SigmaMax))
		if c.SigmaMax <= c.SigmaMin {
			errs = append(errs, fmt.Errorf("sigma_max (%g) must exceed sigma_min (%g)", c.SigmaMax, c.SigmaMin))
		}
	default:
		return fmt.Errorf("unknown SDE kind %q (want hold, cld, vp or ve)", c.Kind)
	}
	errs = append(errs, positive("t_min", c.TMin), positive("T", c.T))
	if c.T <= c.TMin {
		errs = append(errs, fmt.Errorf("T (%g) must exceed t_min (%g)", c.T, c.TMin))
	}
	switch c.Objective {
	case ObjectiveBCSM, ObjectiveDSM:
	case ObjectiveHSM:
		if c.Kind != KindCLD {
			errs = append(errs, fmt.Errorf("objective hsm is CLD's; use bcsm for %s", c.Kind))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown objective %q (want bcsm, hsm or dsm)", c.Objective))
	}
	return errors.Join(errs...)
}

// SDE is one instance of the linear block family. It is immutable and safe for concurrent use.
type SDE struct {
	cfg      Config
	n        int
	f        Matrix             // native drift F
	noise    float64            // q: variance rate of the last block's noise, native units
	split    float64            // Λ: prior precision that splits the reverse drift into A and B
	scale    [MaxBlocks]float64 // x = scale ⊙ z
	priorVar [MaxBlocks]float64 // prior variance of each block, SDE coordinates
	auxVar   float64            // variance of the auxiliary blocks at t = 0, native units
	clock    clock
	eval     evaluator

	// The same dynamics in SDE coordinates (per unit native time).
	driftUser Matrix  // diag(c)·F·diag(c)⁻¹
	noiseUser float64 // c_n²·q
	splitUser float64 // Λ/c_n²
}

// New validates cfg and builds the SDE.
func New(cfg Config) (*SDE, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("hold: invalid %s config: %w", cfg.Kind, err)
	}
	s := &SDE{cfg: cfg, n: cfg.Order, split: 1}
	switch cfg.Kind {
	case KindHOLD:
		coupling, xi := holdChainParams(cfg.Order)
		s.f = chainDrift(coupling, xi)
		s.noise = 2 * xi
		s.auxVar = cfg.Alpha
		s.clock = linearClock{b0: cfg.Beta}
		for k := 0; k < s.n; k++ {
			s.scale[k] = 1 / math.Sqrt(cfg.L)
		}
		if cfg.Order == 3 {
			k, err := newHold3Kernel(cfg.Alpha)
			if err != nil {
				return nil, fmt.Errorf("hold: %w", err)
			}
			s.eval = k
		} else {
			s.eval = newChainKernel(coupling, xi, cfg.Alpha)
		}
	case KindCLD:
		// In z = (x, v/√M) and τ = β√(M⁻¹)·t, CLD is the n = 2 chain with ξ = Γ√(M⁻¹)
		// (docs/math.md#cld); γ is the initial variance of v/√M.
		xi := cfg.Friction * math.Sqrt(cfg.MInv)
		coupling := []float64{1}
		s.f = chainDrift(coupling, xi)
		s.noise = 2 * xi
		s.auxVar = cfg.Alpha
		s.clock = linearClock{b0: cfg.Beta * math.Sqrt(cfg.MInv)}
		s.scale[0], s.scale[1] = 1, 1/math.Sqrt(cfg.MInv)
		s.eval = newChainKernel(coupling, xi, cfg.Alpha)
	case KindVP:
		// dx = −½β(t)x dt + √β(t) dW: the one-block chain with ξ = ½ in time τ = ∫β.
		s.f = chainDrift(nil, 0.5)
		s.noise = 1
		s.clock = linearClock{b0: cfg.BetaMin, b1: cfg.BetaMax - cfg.BetaMin}
		s.scale[0] = 1
		s.eval = scalarKernel{xi: 0.5}
	case KindVE:
		// dx = √(dσ²/dt) dW in time τ = σ(t)² − σ_min², started (as score_sde) with variance σ_min².
		s.f = Matrix{N: 1}
		s.noise = 1
		s.split = 0
		s.clock = veClock{sigmaMin: cfg.SigmaMin, logRatio: math.Log(cfg.SigmaMax / cfg.SigmaMin)}
		s.scale[0] = 1
		s.eval = brownianKernel{base: cfg.SigmaMin * cfg.SigmaMin}
	}
	for k := 0; k < s.n; k++ {
		s.priorVar[k] = s.scale[k] * s.scale[k]
	}
	var inv [MaxBlocks]float64
	for k := 0; k < s.n; k++ {
		inv[k] = 1 / s.scale[k]
	}
	s.driftUser = s.f.scaleRowsCols(s.scale[:s.n], inv[:s.n])
	last := s.scale[s.n-1]
	s.noiseUser = last * last * s.noise
	s.splitUser = s.split / (last * last)
	if cfg.Kind == KindVE {
		s.priorVar[0] = cfg.SigmaMax * cfg.SigmaMax
	}
	return s, nil
}

// holdChainParams returns the couplings g_i and damping ξ of HOLD-n (docs/math.md#the-sde-family): F is tridiagonal
// with F[i][i+1] = g_i = −F[i+1][i] and F[n−1][n−1] = −ξ, which keeps N(0, I/L) stationary.
func holdChainParams(order int) (coupling []float64, xi float64) {
	switch order {
	case 2: // critical damping: CLD in normalised coordinates
		return []float64{1}, 2
	case 3: // the paper's system: eigenvalues −1, −2, −3
		return []float64{1, math.Sqrt(10)}, 6
	default: // eigenvalues −(√5/2)·{1, 2, 3, 4}
		return []float64{1, math.Sqrt(21) / 2, 5 * math.Sqrt(6) / 2}, 5 * math.Sqrt(5)
	}
}

// chainDrift builds F = J − ξ e_n e_nᵀ with J tridiagonal antisymmetric, J[i][i+1] = coupling[i].
func chainDrift(coupling []float64, xi float64) Matrix {
	n := len(coupling) + 1
	f := Matrix{N: n}
	for i, g := range coupling {
		f.a[i][i+1] = g
		f.a[i+1][i] = -g
	}
	f.a[n-1][n-1] = -xi
	return f
}

// Config returns the configuration the SDE was built from.
func (s *SDE) Config() Config { return s.cfg }

// Blocks returns n, the number of blocks per data dimension.
func (s *SDE) Blocks() int { return s.n }

// Horizon returns T.
func (s *SDE) Horizon() float64 { return s.cfg.T }

// MinTime returns t_min.
func (s *SDE) MinTime() float64 { return s.cfg.TMin }

// CheckTime reports whether t lies in [t_min, T].
func (s *SDE) CheckTime(t float64) error {
	if !(t >= s.cfg.TMin && t <= s.cfg.T) {
		return fmt.Errorf("time %g outside [t_min, T] = [%g, %g]", t, s.cfg.TMin, s.cfg.T)
	}
	return nil
}

// Rate returns β(t) = dτ/dt, the factor that scales the native drift and noise variance at time t.
func (s *SDE) Rate(t float64) float64 { return s.clock.rate(t) }

// NativeTime returns τ(t) = ∫₀ᵗ β.
func (s *SDE) NativeTime(t float64) float64 { return s.clock.tau(t) }

// NativeStep returns τ(t) − τ(t−h) = ∫ β over [t−h, t], computed from h without cancellation.
func (s *SDE) NativeStep(t, h float64) float64 { return s.clock.step(t, h) }

// clock maps SDE time to native time.
type clock interface {
	rate(t float64) float64    // dτ/dt
	tau(t float64) float64     // τ(t)
	step(t, h float64) float64 // τ(t) − τ(t−h), accurate also for h ≪ t
}

// linearClock has β(t) = b0 + b1·t (constant for HOLD and CLD, linear for VP).
type linearClock struct{ b0, b1 float64 }

func (c linearClock) rate(t float64) float64    { return c.b0 + c.b1*t }
func (c linearClock) tau(t float64) float64     { return t * (c.b0 + 0.5*c.b1*t) }
func (c linearClock) step(t, h float64) float64 { return h * (c.b0 + c.b1*(t-0.5*h)) }

// veClock has τ(t) = σ(t)² − σ_min² with σ(t) = σ_min·e^{t·logRatio}.
type veClock struct{ sigmaMin, logRatio float64 }

func (c veClock) rate(t float64) float64 {
	sigma := c.sigmaMin * math.Exp(t*c.logRatio)
	return 2 * c.logRatio * sigma * sigma
}

func (c veClock) tau(t float64) float64 {
	return c.sigmaMin * c.sigmaMin * math.Expm1(2*t*c.logRatio)
}

func (c veClock) step(t, h float64) float64 {
	s0 := c.sigmaMin * math.Exp((t-h)*c.logRatio)
	return s0 * s0 * math.Expm1(2*h*c.logRatio)
}
