package sample

import "fmt"

// DefaultSpec is the sampler of a command given no sampler setting (holdctl sample, fid, plot
// trajectory, bench sample, serve): Lie–Trotter, 150 steps on the quadratic grid to ε = 10⁻³.
func DefaultSpec() Spec {
	return Spec{Method: "lt", Steps: 150, Grid: GridQuadratic, End: 1e-3, SigmaMin: DefaultSigmaMin, Tol: 1e-5, Eta: 1, EtaSet: true}
}

// The sampler a trained image network gets when none is named: the best cell of docs/images.md
// (a-sde2 on the vpmatched grid, NFE 50, the final denoising step).
const (
	ImageSampler = "a-sde2"
	ImageGrid    = GridVPMatched
	ImageNFE     = 50
)

// ImageDefaults fills in, for a trained image network, the settings that given does not report
// (given takes holdctl's flag names: sampler, grid, nfe, steps, denoise, clip): Clip 1 (x̂₀ thresholded
// to the data range: without it xdpm2 reaches pixels of ±306 on the shipped HOLD-3 model), and with
// sampler also the measured best sampler when no sampler is named. It returns what it chose, as flags
// ("--clip 1"), for the command to say.
func (s *Spec) ImageDefaults(given func(string) bool, sampler bool) []string {
	var chosen []string
	if sampler && !given("sampler") {
		s.Method = ImageSampler
		chosen = append(chosen, "--sampler "+ImageSampler)
		if !given("grid") {
			s.Grid = ImageGrid
			chosen = append(chosen, "--grid "+ImageGrid)
		}
		if !given("nfe") && !given("steps") {
			s.NFE = ImageNFE
			chosen = append(chosen, fmt.Sprintf("--nfe %d", ImageNFE))
		}
		if !given("denoise") {
			s.Denoise = true
			chosen = append(chosen, "--denoise")
		}
	}
	if !given("clip") {
		s.Clip = 1
		chosen = append(chosen, "--clip 1")
	}
	return chosen
}
