package sample

import (
	"fmt"
	"math"

	"holdgo/hold"
)

// B-step kinds of the Lie–Trotter/Strang sampler. With the score S frozen over the step, the B part of
// the reverse drift is, per unit native time τ and in SDE coordinates,
//
//	ds/dτ = q·(S + Λ·s)          (HOLD, β = 1: ds = 2ξ(L⁻¹S + s)dt; q = 2ξ/L, Λ = L)
//
// with q the last block's noise rate and Λ its prior precision (docs/math.md#b-step).
const (
	// BEuler is the paper's explicit Euler step s ← s + qΔτ(S + Λs) (hold.SDE.BStep).
	BEuler = "euler"
	// BExpKernel is the exponential integrator of LT-exp. The score's dependence on s is stiff and its
	// Gaussian part is known from the kernel: given the data point, ∂S/∂s = −(Σ_t⁻¹)_nn = −ℓ_t². Writing
	// S = −ℓ_t²s + R and freezing R (evaluated with the one score call) leaves the linear ODE
	// ds/dτ = −κs + qR with κ = q(ℓ_t² − Λ) (the stiffness of docs/math.md#stiffness), solved exactly:
	// s ← s + Δτ·φ₁(−κΔτ)·q(S + Λs), φ₁(z) = (e^z − 1)/z. The step is stable for every h; it is exact
	// when the score is affine in s with slope −ℓ_t² (point-mass data, or any data at large t).
	BExpKernel = "exp"
	// BExpFrozen integrates only B's own linear term qΛs exactly with S frozen (hold.SDE.BStepExact):
	// the same formula with ℓ_t² replaced by 0. It ignores the score's own dependence on s, which is what
	// makes B stiff, and does worse than BEuler (docs/math.md#b-step); it is kept for comparison.
	BExpFrozen = "exp-frozen"
)

// Score times of the Lie–Trotter sampler's B-step.
const (
	// ScoreMidpoint evaluates the score at t − h/2, the time reached by the first A half-step. In the
	// Strang composition A(h/2)·B(h)·A(h/2) with time advanced by the A flows, B acts at the midpoint
	// time; this is the choice that keeps the splitting second order when B is solved exactly
	// (the weak-order test shows order 2 for LT-exp on point-mass data, 1 with ScoreStart).
	ScoreMidpoint = "mid"
	// ScoreStart evaluates it at the step's start time t, as CLD-SGM's SSCS does. With an Euler B-step
	// the scheme is first order either way, and with exact scores on the 1-D mixture the start time was
	// the better choice there (docs/math.md#b-step).
	ScoreStart = "start"
)

// LieTrotter is the splitting sampler A(h/2)·B(h)·A(h/2) with hold's exact A-step (mean map and
// cancellation-free noise Cholesky factor) and one score evaluation per step (the B-step's). For CLD
// with BEuler and ScoreStart it is CLD-SGM's SSCS.
type LieTrotter struct {
	BStep   string // BEuler (default ""), BExpKernel or BExpFrozen
	ScoreAt string // ScoreMidpoint (default "") or ScoreStart
}

// Name returns the registry name: "lt" (Euler B-step, score at the step's start: the paper's sampler,
// CLD-SGM's SSCS for CLD), "lt-mid" (Euler, score at the midpoint), "lt-exp" (kernel exponential
// integrator, midpoint) or "lt-expfrozen", the last two with "@start" when the score is taken at the start.
func (m LieTrotter) Name() string {
	switch m.BStep {
	case BExpKernel, BExpFrozen:
		name := "lt-exp"
		if m.BStep == BExpFrozen {
			name = "lt-expfrozen"
		}
		if m.ScoreAt == ScoreStart {
			name += "@start"
		}
		return name
	}
	if m.ScoreAt == ScoreStart {
		return "lt"
	}
	return "lt-mid"
}

func (m LieTrotter) integrate(r *run, x []float64, batch int) error {
	switch m.BStep {
	case "", BEuler, BExpKernel, BExpFrozen:
	default:
		return fmt.Errorf("unknown B-step %q (want euler, exp or exp-frozen)", m.BStep)
	}
	switch m.ScoreAt {
	case "", ScoreMidpoint, ScoreStart:
	default:
		return fmt.Errorf("unknown score time %q (want mid or start)", m.ScoreAt)
	}
	return integrateSteps(m, r, x, batch)
}

func (m LieTrotter) step(r *run, x []float64, batch int, t, h float64) error {
	noise := make([]float64, len(x))
	half := h / 2
	r.noise.fill(noise)
	if err := r.sde.ApplyAStep(x, batch, r.sde.AStep(t, half), noise); err != nil {
		return err
	}
	ts := t - half
	if m.ScoreAt == ScoreStart {
		ts = t
	}
	sc, err := r.evalScore(x, batch, ts)
	if err != nil {
		return err
	}
	switch m.BStep {
	case BExpKernel:
		ell := r.sde.Kernel(ts).Ell
		bExp(r.sde, x, sc, batch, r.d, t, h, ell*ell)
	case BExpFrozen:
		bExp(r.sde, x, sc, batch, r.d, t, h, 0)
	default:
		if err := r.sde.BStep(x, sc, batch, t, h); err != nil {
			return err
		}
	}
	r.noise.fill(noise)
	return r.sde.ApplyAStep(x, batch, r.sde.AStep(t-half, half), noise)
}

// noiseRate returns q, the last block's noise variance per unit native time in SDE coordinates
// (2ξ/L for HOLD): g(t)² = β(t)·q.
func noiseRate(sde *hold.SDE) float64 {
	t := sde.Horizon()
	g := sde.Diffusion(t)
	return g * g / sde.Rate(t)
}

// splitPrecision returns Λ, the precision that splits the reverse drift into A and B: the last block's
// prior precision, or 0 for VE (F = 0). hold keeps it unexported; this mirrors its definition.
func splitPrecision(sde *hold.SDE) float64 {
	if sde.Config().Kind == hold.KindVE {
		return 0
	}
	return 1 / sde.PriorVariance(sde.Blocks()-1)
}

// bExp applies s ← s + Δτ·φ₁(−κΔτ)·q(S + Λs) with κ = q(ell2 − Λ) to the last block (see BExpKernel).
func bExp(sde *hold.SDE, x, score []float64, batch, d int, t, h, ell2 float64) {
	q, lambda := noiseRate(sde), splitPrecision(sde)
	dtau := sde.NativeStep(t, h)
	z := q * (ell2 - lambda) * dtau
	phi := 1.0
	if z != 0 {
		phi = -math.Expm1(-z) / z
	}
	c := q * dtau * phi
	n := sde.Blocks()
	for b := 0; b < batch; b++ {
		last := x[b*n*d+(n-1)*d : (b+1)*n*d]
		sc := score[b*d : (b+1)*d]
		for i, s := range last {
			last[i] = s + c*(sc[i]+lambda*s)
		}
	}
}

// EulerMaruyama steps the reverse SDE: x ← x + h·(−f + g²S) + √h·g(t)·z on the last block, with the
// score at the step's start time (one NFE per step).
type EulerMaruyama struct{}

// Name returns "em".
func (EulerMaruyama) Name() string { return "em" }

func (m EulerMaruyama) integrate(r *run, x []float64, batch int) error {
	return integrateSteps(m, r, x, batch)
}

func (EulerMaruyama) step(r *run, x []float64, batch int, t, h float64) error {
	sc, err := r.evalScore(x, batch, t)
	if err != nil {
		return err
	}
	drift := make([]float64, len(x))
	if err := r.sde.ReverseDrift(drift, x, sc, r.times[:batch]); err != nil {
		return err
	}
	for i := range x {
		x[i] += h * drift[i]
	}
	addLastBlockNoise(r, x, batch, math.Sqrt(h)*r.sde.Diffusion(t))
	return nil
}

// addLastBlockNoise adds std·z, z ~ N(0, I), to the last block of every sample.
func addLastBlockNoise(r *run, x []float64, batch int, std float64) {
	n, d := r.blocks(), r.d
	z := make([]float64, batch*d)
	r.noise.fill(z)
	for b := 0; b < batch; b++ {
		last := x[b*n*d+(n-1)*d : (b+1)*n*d]
		for i := range last {
			last[i] += std * z[b*d+i]
		}
	}
}

// DefaultSNR is score_sde's signal-to-noise ratio of the Langevin corrector for VE.
const DefaultSNR = 0.16

// PredictorCorrector is score_sde's PC sampler: per step, CorrectorSteps Langevin corrector steps at
// time t, then a reverse-diffusion predictor from t to t − h,
//
//	x ← x − h·f(x, t) + G²·S(x, t) + G·z,   G² = g²-integral over the step (σ_t² − σ_{t−h}² for VE).
//
// The corrector (score_sde's LangevinCorrector with α = 1, as for VE) moves the last block by
// ε·S + √(2ε)·z with ε = 2(snr·‖z‖/‖S‖)², the norms averaged over the batch as score_sde does, so the
// step size depends on the chunk. NFE per step: 1 + CorrectorSteps. Meant for VE.
type PredictorCorrector struct {
	SNR            float64 // 0 means DefaultSNR
	CorrectorSteps int     // 0 means 1; negative means none
}

// Name returns "pc".
func (PredictorCorrector) Name() string { return "pc" }

func (m PredictorCorrector) integrate(r *run, x []float64, batch int) error {
	return integrateSteps(m, r, x, batch)
}

func (m PredictorCorrector) step(r *run, x []float64, batch int, t, h float64) error {
	snr := m.SNR
	if snr == 0 {
		snr = DefaultSNR
	}
	corrector := m.CorrectorSteps
	if corrector == 0 {
		corrector = 1
	}
	n, d := r.blocks(), r.d
	z := make([]float64, batch*d)
	for range max(0, corrector) {
		sc, err := r.evalScore(x, batch, t)
		if err != nil {
			return err
		}
		r.noise.fill(z)
		var gradNorm, noiseNorm float64
		for b := 0; b < batch; b++ {
			var g2, z2 float64
			for i := b * d; i < (b+1)*d; i++ {
				g2 += sc[i] * sc[i]
				z2 += z[i] * z[i]
			}
			gradNorm += math.Sqrt(g2)
			noiseNorm += math.Sqrt(z2)
		}
		if gradNorm == 0 {
			continue
		}
		ratio := snr * noiseNorm / gradNorm
		eps := 2 * ratio * ratio
		for b := 0; b < batch; b++ {
			last := x[b*n*d+(n-1)*d : (b+1)*n*d]
			for i := range last {
				last[i] += eps*sc[b*d+i] + math.Sqrt(2*eps)*z[b*d+i]
			}
		}
	}
	sc, err := r.evalScore(x, batch, t)
	if err != nil {
		return err
	}
	drift := make([]float64, len(x))
	if err := r.sde.ForwardDrift(drift, x, r.times[:batch]); err != nil {
		return err
	}
	g2 := noiseRate(r.sde) * r.sde.NativeStep(t, h)
	for b := 0; b < batch; b++ {
		row := x[b*n*d : (b+1)*n*d]
		for i := range row {
			row[i] -= h * drift[b*n*d+i]
		}
		last := row[(n-1)*d:]
		for i := range last {
			last[i] += g2 * sc[b*d+i]
		}
	}
	addLastBlockNoise(r, x, batch, math.Sqrt(g2))
	return nil
}

// pfDrift writes the probability-flow drift in reverse time, −f + ½g²S, at time t (one NFE).
func pfDrift(r *run, dst, x []float64, batch int, t float64) error {
	sc, err := r.evalScore(x, batch, t)
	if err != nil {
		return err
	}
	return r.sde.ProbabilityFlowDrift(dst, x, sc, r.times[:batch])
}

// Heun is the explicit trapezoidal rule (second order) on the probability-flow ODE, 2 NFE per step.
type Heun struct{}

// Name returns "heun".
func (Heun) Name() string { return "heun" }

func (m Heun) integrate(r *run, x []float64, batch int) error { return integrateSteps(m, r, x, batch) }

func (Heun) step(r *run, x []float64, batch int, t, h float64) error {
	k1 := make([]float64, len(x))
	k2 := make([]float64, len(x))
	y := make([]float64, len(x))
	if err := pfDrift(r, k1, x, batch, t); err != nil {
		return err
	}
	for i := range x {
		y[i] = x[i] + h*k1[i]
	}
	if err := pfDrift(r, k2, y, batch, t-h); err != nil {
		return err
	}
	for i := range x {
		x[i] += 0.5 * h * (k1[i] + k2[i])
	}
	return nil
}

// RK4 is the classical fourth-order Runge–Kutta method on the probability-flow ODE, 4 NFE per step.
type RK4 struct{}

// Name returns "rk4".
func (RK4) Name() string { return "rk4" }

func (m RK4) integrate(r *run, x []float64, batch int) error { return integrateSteps(m, r, x, batch) }

func (RK4) step(r *run, x []float64, batch int, t, h float64) error {
	var k [4][]float64
	for j := range k {
		k[j] = make([]float64, len(x))
	}
	y := make([]float64, len(x))
	stage := func(j int, c, a float64) error { // k_j = drift(x + a·h·k_{j−1}, t − c·h)
		src := x
		if j > 0 {
			for i := range x {
				y[i] = x[i] + a*h*k[j-1][i]
			}
			src = y
		}
		return pfDrift(r, k[j], src, batch, t-c*h)
	}
	for j, ca := range [4][2]float64{{0, 0}, {0.5, 0.5}, {0.5, 0.5}, {1, 1}} {
		if err := stage(j, ca[0], ca[1]); err != nil {
			return err
		}
	}
	for i := range x {
		x[i] += h / 6 * (k[0][i] + 2*k[1][i] + 2*k[2][i] + k[3][i])
	}
	return nil
}
