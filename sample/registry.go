package sample

import (
	"fmt"
	"strings"
)

// Options are the settings some registry methods take.
type Options struct {
	Tol float64 // rtol = atol of "ode" (0: 1e-5)
	Eta float64 // "xanc": 1 is the exact posterior step, 0 is xddim (default 1 when zero-valued Options)
	// EtaSet marks Eta as given (so that 0 can be asked for).
	EtaSet bool
	Var    string // extrapolation variable of xdpm2/xdpm3: VarT (default) or VarLogT
	// Clip > 0 thresholds every x̂₀ of the x̂₀ and aligned samplers to [−Clip, Clip] (1 for images in
	// [−1, 1]); 0 leaves it as the score gives it.
	Clip float64
}

// MethodInfo is one entry of the sampler registry: the one place that says what a sampler name means
// and how many score evaluations one step costs. holdctl sample, experiment samplers and
// experiment nfe all go through it.
type MethodInfo struct {
	Name    string
	PerStep int // score evaluations per step; 0 for the adaptive solver (its cost is measured)
	Help    string
	build   func(Options) Method
}

// Registry lists the samplers by name.
var Registry = []MethodInfo{
	{"lt", 1, "Lie–Trotter (Strang) with the paper's Euler B-step, score at the step's start (CLD: SSCS)",
		func(Options) Method { return LieTrotter{BStep: BEuler, ScoreAt: ScoreStart} }},
	{"lt-mid", 1, "Lie–Trotter with the Euler B-step, score at the midpoint time",
		func(Options) Method { return LieTrotter{BStep: BEuler, ScoreAt: ScoreMidpoint} }},
	{"lt-exp", 1, "Lie–Trotter with the kernel exponential-integrator B-step",
		func(Options) Method { return LieTrotter{BStep: BExpKernel} }},
	{"lt-expfrozen", 1, "Lie–Trotter with B's linear term exact and the score frozen",
		func(Options) Method { return LieTrotter{BStep: BExpFrozen} }},
	{"em", 1, "Euler–Maruyama on the reverse SDE", func(Options) Method { return EulerMaruyama{} }},
	{"pc", 2, "predictor–corrector (reverse diffusion + Langevin), score_sde's VE sampler",
		func(Options) Method { return PredictorCorrector{} }},
	{"heun", 2, "Heun on the probability-flow ODE", func(Options) Method { return Heun{} }},
	{"rk4", 4, "classical Runge–Kutta on the probability-flow ODE", func(Options) Method { return RK4{} }},
	{"ode", 0, "adaptive Dormand–Prince RK45 on the probability-flow ODE", func(o Options) Method {
		tol := o.Tol
		if tol == 0 {
			tol = 1e-5
		}
		return DormandPrince{RTol: tol, ATol: tol}
	}},
	{"xddim", 1, "x̂₀ order-0 exponential step (DDIM for VP, gDDIM-style for CLD)",
		func(o Options) Method { return XHat{Points: 1, Clip: o.Clip} }},
	{"xdpm2", 1, "x̂₀ two-step multistep exponential integrator (DPM-Solver++(2M)-like)",
		func(o Options) Method { return XHat{Points: 2, Var: o.Var, Clip: o.Clip} }},
	{"xdpm3", 1, "x̂₀ three-step multistep exponential integrator (DPM-Solver++(3M)-like)",
		func(o Options) Method { return XHat{Points: 3, Var: o.Var, Clip: o.Clip} }},
	{"xanc", 1, "x̂₀ Gaussian-posterior stochastic step, --eta blends it with xddim",
		func(o Options) Method {
			eta := 1.0
			if o.EtaSet {
				eta = o.Eta
			}
			return XHat{Stochastic: true, Eta: eta, Clip: o.Clip}
		}},
	{"a-ddim", 1, "aligned gauge: DDIM in the sufficient statistic c (VE in σ; use a σ-grid: edm, vpmatched, lambda or vplambda)",
		func(o Options) Method { return Aligned{Solver: AlignedDDIM, Clip: o.Clip} }},
	{"a-dpm2", 1, "aligned gauge: DPM-Solver++(2M) in λ = −log σ",
		func(o Options) Method { return Aligned{Solver: AlignedDPM2, Clip: o.Clip} }},
	{"a-dpm3", 1, "aligned gauge: DPM-Solver++(3M) in λ = −log σ",
		func(o Options) Method { return Aligned{Solver: AlignedDPM3, Clip: o.Clip} }},
	{"a-dpm2c", 1, "aligned gauge: DPM-Solver++(2M) with the evaluation-free corrector (UniC-style)",
		func(o Options) Method { return Aligned{Solver: AlignedDPM2, Corrector: true, Clip: o.Clip} }},
	{"a-dpm3c", 1, "aligned gauge: DPM-Solver++(3M) with the evaluation-free corrector (UniC-style)",
		func(o Options) Method { return Aligned{Solver: AlignedDPM3, Corrector: true, Clip: o.Clip} }},
	{"a-xdpm2", 1, "aligned gauge: x̂₀ extrapolated linearly in VP's time, integrated exactly (VP's xdpm2 on vpmatched)",
		func(o Options) Method { return Aligned{Solver: AlignedDPM2, Var: VarVPTime, Clip: o.Clip} }},
	{"a-xdpm3", 1, "aligned gauge: x̂₀ extrapolated quadratically in VP's time, integrated exactly (VP's xdpm3 on vpmatched)",
		func(o Options) Method { return Aligned{Solver: AlignedDPM3, Var: VarVPTime, Clip: o.Clip} }},
	{"a-xdpm3c", 1, "aligned gauge: a-xdpm3 with the evaluation-free corrector",
		func(o Options) Method {
			return Aligned{Solver: AlignedDPM3, Var: VarVPTime, Corrector: true, Clip: o.Clip}
		}},
	{"a-anc", 1, "aligned gauge: ancestral (DDPM) step in c, stochastic",
		func(o Options) Method { return Aligned{Solver: AlignedAnc, Clip: o.Clip} }},
	{"a-sde2", 1, "aligned gauge: DPM-Solver++(2M) SDE in c, stochastic",
		func(o Options) Method { return Aligned{Solver: AlignedSDE2, Clip: o.Clip} }},
	{"a-ode", 0, "aligned gauge: adaptive RK45 on dc/dλ = x̂₀ − c (--tol; the grid's ends only)",
		func(o Options) Method {
			tol := o.Tol
			if tol == 0 {
				tol = DefaultTol
			}
			return Aligned{Solver: AlignedODE, Tol: tol, Clip: o.Clip}
		}},
	{"a-heun", 2, "aligned gauge: EDM's Heun step in σ (use the edm grid)",
		func(o Options) Method { return Aligned{Solver: AlignedHeun, Clip: o.Clip} }},
}

// MethodNames returns the registry's names in order.
func MethodNames() []string {
	names := make([]string, len(Registry))
	for i, m := range Registry {
		names[i] = m.Name
	}
	return names
}

// Lookup returns the registry entry of a name.
func Lookup(name string) (MethodInfo, error) {
	for _, m := range Registry {
		if m.Name == name {
			return m, nil
		}
	}
	return MethodInfo{}, fmt.Errorf("sample: unknown sampler %q (want one of %s)", name, strings.Join(MethodNames(), ", "))
}

// NewMethod returns the method of a registry name, its score evaluations per step, and an error for
// an unknown name or invalid options.
func NewMethod(name string, opt Options) (Method, int, error) {
	info, err := Lookup(name)
	if err != nil {
		return nil, 0, err
	}
	m := info.build(opt)
	if c, ok := m.(interface{ check() error }); ok {
		if err := c.check(); err != nil {
			return nil, 0, fmt.Errorf("sample: %s: %w", name, err)
		}
	}
	return m, info.PerStep, nil
}

// StepsFor returns the steps a fixed-step sampler takes within nfe score evaluations, the final
// denoising (or x̂₀ read-out) step counting one when denoise is set; 1 for the adaptive solver, which
// uses only the grid's ends.
func StepsFor(name string, nfe int, denoise bool) (int, error) {
	info, err := Lookup(name)
	if err != nil {
		return 0, err
	}
	if info.PerStep == 0 {
		return 1, nil
	}
	budget := nfe
	if denoise {
		budget--
	}
	steps := budget / info.PerStep
	if steps < 1 {
		return 0, fmt.Errorf("sample: %d score evaluations are too few for %s (%d per step%s)", nfe, name, info.PerStep,
			map[bool]string{true: " and one for the final step", false: ""}[denoise])
	}
	return steps, nil
}

// HasReadout reports whether a registry sampler ends with its own x̂₀ read-out when Sampler.Denoise is
// set (the x̂₀ and aligned samplers) rather than CLD-SGM's denoising step.
func HasReadout(name string) bool {
	info, err := Lookup(name)
	if err != nil {
		return false
	}
	_, ok := info.build(Options{}).(readouter)
	return ok
}

// PreferredGrid returns the grid a registry sampler is meant for: the σ-grids for the aligned samplers
// (EDM's for a-heun, VP's schedule for the others), the quadratic t-grid (CLD-SGM's) for the rest.
func PreferredGrid(name string) string {
	info, err := Lookup(name)
	if err != nil {
		return GridQuadratic
	}
	if a, ok := info.build(Options{}).(Aligned); ok {
		if a.Solver == AlignedHeun {
			return GridEDM
		}
		return GridVPMatched
	}
	return GridQuadratic
}

// ConvergedFlow returns the registry name of the adaptive ODE solver whose exact flow a deterministic
// sampler approximates, so that both map the same prior draw to nearly the same sample: "a-ode" for the
// aligned gauge's deterministic solvers, "ode" for the probability-flow ODE's (heun, rk4, ode); "" for
// the stochastic samplers and for the kernel-gauge x̂₀ steps, whose deterministic flow (the L·Q gauge)
// is neither of the two.
func ConvergedFlow(name string) string {
	info, err := Lookup(name)
	if err != nil {
		return ""
	}
	switch m := info.build(Options{}).(type) {
	case Aligned:
		if m.Solver == AlignedAnc || m.Solver == AlignedSDE2 {
			return ""
		}
		return "a-ode"
	case Heun, RK4, DormandPrince:
		return "ode"
	}
	return ""
}
