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
	// Readout: the sampler ends with its own x̂₀ read-out when Sampler.Denoise is set (the x̂₀ and
	// aligned samplers), not CLD-SGM's denoising step.
	Readout bool
	// Grid is the grid the sampler is meant for: the σ-grids for the aligned samplers (EDM's for
	// a-heun, VP's schedule for the others), the quadratic t-grid (CLD-SGM's) for the rest.
	Grid string
	// Flow is the registry name of the adaptive ODE solver whose exact flow a deterministic sampler
	// approximates ("a-ode" for the aligned gauge's deterministic solvers, "ode" for the
	// probability-flow ODE's); "" for the stochastic samplers and the kernel-gauge x̂₀ steps, whose
	// deterministic flow (the L·Q gauge) is neither.
	Flow string
	// Device: the sampler keeps its whole state on a device (Sampler.SampleOn); the others integrate
	// on the host with the network evaluated on the device.
	Device bool
}

// Registry lists the samplers by name.
var Registry = []MethodInfo{
	{Name: "lt", PerStep: 1, Help: "Lie–Trotter (Strang) with the paper's Euler B-step, score at the step's start (CLD: SSCS)", Grid: GridQuadratic, Device: true,
		build: func(Options) Method { return LieTrotter{BStep: BEuler, ScoreAt: ScoreStart} }},
	{Name: "lt-mid", PerStep: 1, Help: "Lie–Trotter with the Euler B-step, score at the midpoint time", Grid: GridQuadratic,
		build: func(Options) Method { return LieTrotter{BStep: BEuler, ScoreAt: ScoreMidpoint} }},
	{Name: "lt-exp", PerStep: 1, Help: "Lie–Trotter with the kernel exponential-integrator B-step", Grid: GridQuadratic,
		build: func(Options) Method { return LieTrotter{BStep: BExpKernel} }},
	{Name: "lt-expfrozen", PerStep: 1, Help: "Lie–Trotter with B's linear term exact and the score frozen", Grid: GridQuadratic,
		build: func(Options) Method { return LieTrotter{BStep: BExpFrozen} }},
	{Name: "em", PerStep: 1, Help: "Euler–Maruyama on the reverse SDE", Grid: GridQuadratic, Device: true,
		build: func(Options) Method { return EulerMaruyama{} }},
	{Name: "pc", PerStep: 2, Help: "predictor–corrector (reverse diffusion + Langevin), score_sde's VE sampler", Grid: GridQuadratic,
		build: func(Options) Method { return PredictorCorrector{} }},
	{Name: "heun", PerStep: 2, Help: "Heun on the probability-flow ODE", Grid: GridQuadratic, Flow: "ode",
		build: func(Options) Method { return Heun{} }},
	{Name: "rk4", PerStep: 4, Help: "classical Runge–Kutta on the probability-flow ODE", Grid: GridQuadratic, Flow: "ode",
		build: func(Options) Method { return RK4{} }},
	{Name: "ode", PerStep: 0, Help: "adaptive Dormand–Prince RK45 on the probability-flow ODE", Grid: GridQuadratic, Flow: "ode",
		build: func(o Options) Method {
			tol := o.Tol
			if tol == 0 {
				tol = 1e-5
			}
			return DormandPrince{RTol: tol, ATol: tol}
		}},
	{Name: "xddim", PerStep: 1, Help: "x̂₀ order-0 exponential step (DDIM for VP, gDDIM-style for CLD)", Readout: true, Grid: GridQuadratic,
		build: func(o Options) Method { return XHat{Points: 1, Clip: o.Clip} }},
	{Name: "xdpm2", PerStep: 1, Help: "x̂₀ two-step multistep exponential integrator (DPM-Solver++(2M)-like)", Readout: true, Grid: GridQuadratic,
		build: func(o Options) Method { return XHat{Points: 2, Var: o.Var, Clip: o.Clip} }},
	{Name: "xdpm3", PerStep: 1, Help: "x̂₀ three-step multistep exponential integrator (DPM-Solver++(3M)-like)", Readout: true, Grid: GridQuadratic,
		build: func(o Options) Method { return XHat{Points: 3, Var: o.Var, Clip: o.Clip} }},
	{Name: "xanc", PerStep: 1, Help: "x̂₀ Gaussian-posterior stochastic step, --eta blends it with xddim", Readout: true, Grid: GridQuadratic,
		build: func(o Options) Method {
			eta := 1.0
			if o.EtaSet {
				eta = o.Eta
			}
			return XHat{Stochastic: true, Eta: eta, Clip: o.Clip}
		}},
	{Name: "a-ddim", PerStep: 1, Help: "aligned gauge: DDIM in the sufficient statistic c (VE in σ; use a σ-grid: edm, vpmatched, lambda or vplambda)", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedDDIM, Clip: o.Clip} }},
	{Name: "a-dpm2", PerStep: 1, Help: "aligned gauge: DPM-Solver++(2M) in λ = −log σ", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedDPM2, Clip: o.Clip} }},
	{Name: "a-dpm3", PerStep: 1, Help: "aligned gauge: DPM-Solver++(3M) in λ = −log σ", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedDPM3, Clip: o.Clip} }},
	{Name: "a-dpm2c", PerStep: 1, Help: "aligned gauge: DPM-Solver++(2M) with the evaluation-free corrector (UniC-style)", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedDPM2, Corrector: true, Clip: o.Clip} }},
	{Name: "a-dpm3c", PerStep: 1, Help: "aligned gauge: DPM-Solver++(3M) with the evaluation-free corrector (UniC-style)", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedDPM3, Corrector: true, Clip: o.Clip} }},
	{Name: "a-xdpm2", PerStep: 1, Help: "aligned gauge: x̂₀ extrapolated linearly in VP's time, integrated exactly (VP's xdpm2 on vpmatched)", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedDPM2, Var: VarVPTime, Clip: o.Clip} }},
	{Name: "a-xdpm3", PerStep: 1, Help: "aligned gauge: x̂₀ extrapolated quadratically in VP's time, integrated exactly (VP's xdpm3 on vpmatched)", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedDPM3, Var: VarVPTime, Clip: o.Clip} }},
	{Name: "a-xdpm3c", PerStep: 1, Help: "aligned gauge: a-xdpm3 with the evaluation-free corrector", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method {
			return Aligned{Solver: AlignedDPM3, Var: VarVPTime, Corrector: true, Clip: o.Clip}
		}},
	{Name: "a-anc", PerStep: 1, Help: "aligned gauge: ancestral (DDPM) step in c, stochastic", Readout: true, Grid: GridVPMatched,
		build: func(o Options) Method { return Aligned{Solver: AlignedAnc, Clip: o.Clip} }},
	{Name: "a-sde2", PerStep: 1, Help: "aligned gauge: DPM-Solver++(2M) SDE in c, stochastic", Readout: true, Grid: GridVPMatched,
		build: func(o Options) Method { return Aligned{Solver: AlignedSDE2, Clip: o.Clip} }},
	{Name: "a-ode", PerStep: 0, Help: "aligned gauge: adaptive RK45 on dc/dλ = x̂₀ − c (--tol; the grid's ends only)", Readout: true, Grid: GridVPMatched, Flow: "a-ode",
		build: func(o Options) Method {
			tol := o.Tol
			if tol == 0 {
				tol = DefaultTol
			}
			return Aligned{Solver: AlignedODE, Tol: tol, Clip: o.Clip}
		}},
	{Name: "a-heun", PerStep: 2, Help: "aligned gauge: EDM's Heun step in σ (use the edm grid)", Readout: true, Grid: GridEDM, Flow: "a-ode",
		build: func(o Options) Method { return Aligned{Solver: AlignedHeun, Clip: o.Clip} }},
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

// HasReadout reports whether a registry sampler ends with its own x̂₀ read-out (MethodInfo.Readout).
func HasReadout(name string) bool {
	info, err := Lookup(name)
	return err == nil && info.Readout
}

// PreferredGrid returns the grid a registry sampler is meant for (MethodInfo.Grid; the quadratic
// t-grid for an unknown name).
func PreferredGrid(name string) string {
	info, err := Lookup(name)
	if err != nil {
		return GridQuadratic
	}
	return info.Grid
}

// ConvergedFlow returns the registry name of the adaptive ODE solver whose exact flow a deterministic
// sampler approximates, so that both map the same prior draw to nearly the same sample
// (MethodInfo.Flow; "" for an unknown name).
func ConvergedFlow(name string) string {
	info, err := Lookup(name)
	if err != nil {
		return ""
	}
	return info.Flow
}
