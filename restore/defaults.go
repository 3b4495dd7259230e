package restore

import "holdgo/sample"

// DefaultDPSScale is DPS's default ζ: swept at the default NFE 50 on the first 50 training images
// (inpaint-box, fmnist-hold3; docs/restoration.md): PSNR 16.6 dB at DPS's own 0.3 (tuned for 1,000 steps),
// 20.2 at 1, 20.8 at 3, 19.2 at 10.
const DefaultDPSScale = 3

// DefaultParams are a restoration's settings when none is given (holdctl restore's flag defaults,
// serve's page before its fields): a centred box of 14 pixels, drop 0.7, σ_b 1, DDNM+'s η, RePaint's 4
// passes over blocks of 10 steps, ζ = DefaultDPSScale, ΠGDM's v = 1, x̂₀ clipped at 1, NFE 50 on the
// vpmatched grid, 64 images, one restoration each, seed 1. The task, method, model and images have no
// default.
func DefaultParams() Params {
	return Params{Task: Task{Box: 14, BoxPos: BoxCenter, Drop: 0.7, BlurSigma: 1}, Eta: DefaultEta, Resample: 4, Jump: 10,
		DPSScale: DefaultDPSScale, PiGDMVar: 1, Clip: 1, Grid: sample.GridVPMatched, NFE: 50, SigmaMin: sample.DefaultSigmaMin,
		N: 64, K: 1, Seed: 1, Outs: []string{"restored.npy"}}
}
