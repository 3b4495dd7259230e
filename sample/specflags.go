package sample

import (
	"fmt"
	"io"
)

// SpecFlags are the sampler's settings of every command that samples a trained or oracle model
// (holdctl sample, fid, plot trajectory, bench sample, serve), as tagged fields (internal/cliconf):
// each command embeds them in its options. DefaultSpecFlags holds the defaults; Spec is the sampler
// they describe.
type SpecFlags struct {
	Sampler    string  `flag:"sampler"`                                                                                                          // the help lists MethodNames (holdctl's sampleHelp)
	NFE        int     `flag:"nfe" min:"0" max:"1048576" note:"0: use --steps" help:"score evaluations (sets the steps of fixed-step samplers)"` // holdctl's maxNFE
	Steps      int     `flag:"steps" min:"1" max:"1048576" help:"steps of fixed-step samplers (when --nfe is not given)"`
	Grid       string  `flag:"grid"`
	Eps        float64 `flag:"eps" gt:"0" note:"below the horizon T" help:"end time ε of the reverse process (t-grids: uniform, quadratic, geometric, logsnr)"`
	SigmaMin   float64 `flag:"sigma-min" min:"0" note:"0: the default" help:"noise level σ of the sufficient statistic at which the σ-grids (edm, vpmatched, lambda, vplambda) end"`
	Clip       float64 `flag:"clip" min:"0" note:"0: off" help:"threshold every x̂₀ to [−clip, clip] (1 for images; 0: off): inside the x̂₀ and aligned samplers, and for the others through the score of the clipped denoiser"`
	Denoise    bool    `flag:"denoise" help:"final noise-free step at ε (CLD-SGM's denoising; one more evaluation)"`
	Tol        float64 `flag:"tol" gt:"0" lt:"1" help:"rtol = atol of the adaptive ODE sampler"`
	Eta        float64 `flag:"eta" min:"0" max:"1" help:"xanc: 1 the exact Gaussian-posterior step, 0 xddim, in between the DDIM-style blend"`
	ForwardMiB int     `flag:"forward-mib" min:"0" max:"1048576" note:"at most the memory budget" help:"trained networks: memory for one forward pass's activations in MiB, from which the forward batch is chosen (measured on a first pass of 8 samples; 0: passes of 64 samples)"`
}

// DefaultSpecFlags are SpecFlags' defaults: DefaultSpec.
func DefaultSpecFlags() SpecFlags {
	d := DefaultSpec()
	return SpecFlags{Sampler: d.Method, NFE: d.NFE, Steps: d.Steps, Grid: d.Grid, Eps: d.End, SigmaMin: d.SigmaMin,
		Clip: d.Clip, Denoise: d.Denoise, Tol: d.Tol, Eta: d.Eta}
}

// Spec is the sampler the options describe (isSet tells which were given, by flag name: a
// cli.Context's IsSet).
func (o SpecFlags) Spec(isSet func(string) bool) Spec {
	return Spec{Method: o.Sampler, NFE: o.NFE, Steps: o.Steps, Grid: o.Grid, End: o.Eps, SigmaMin: o.SigmaMin,
		Clip: o.Clip, Denoise: o.Denoise, Tol: o.Tol, Eta: o.Eta, EtaSet: true, NFESet: isSet("nfe")}
}

// WarnDiverged tells the user on w, when some of n samples diverged, how many and what to try; where
// says what the command does with them.
func WarnDiverged(w io.Writer, diverged, n int, where string) {
	if diverged == 0 {
		return
	}
	fmt.Fprintf(w, "warning: %d of %d samples diverged (NaN, Inf or beyond ±%g: the learned score pushed them off "+
		"where training saw no data); %s. Another sampler (em), more NFE or an earlier checkpoint usually helps.\n",
		diverged, n, DivergedBound, where)
}
