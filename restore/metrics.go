package restore

import (
	"fmt"
	"math"
)

// PSNR returns the peak signal-to-noise ratio in dB of one image x against the truth ref, both in
// [−1, 1] and compared on [0, 1] (v ↦ (v + 1)/2): 10·log₁₀(1/MSE). Identical images give +Inf.
func PSNR(x, ref []float64) float64 {
	var mse float64
	for i := range x {
		e := 0.5 * (x[i] - ref[i])
		mse += e * e
	}
	mse /= float64(len(x))
	return -10 * math.Log10(mse)
}

// SSIM constants: scikit-image's structural_similarity with gaussian_weights=True, sigma=1.5,
// use_sample_covariance=False, data_range=1 (images on [0, 1]).
const (
	ssimSigma  = 1.5
	ssimRadius = 5 // scikit-image's truncate 3.5: int(3.5·1.5 + 0.5)
	ssimK1     = 0.01
	ssimK2     = 0.03
)

// SSIM returns the mean structural similarity of one C×H×W image x against ref (both in [−1, 1],
// compared on [0, 1]), as scikit-image computes it with gaussian_weights=True, sigma 1.5,
// use_sample_covariance=False, K1 0.01, K2 0.03, data range 1: per pixel, with local means, variances
// and covariance under the normalised 11×11 Gaussian window w,
//
//	S = (2μ_xμ_y + C₁)(2σ_xy + C₂) / ((μ_x² + μ_y² + C₁)(σ_x² + σ_y² + C₂)),  C₁ = K₁², C₂ = K₂²,
//
// σ_x² = E_w[x²] − μ_x² (population form), averaged over the valid region (pixels at least 5 from every
// border, where the window lies inside the image, as scikit-image's crop) and over channels. Images
// smaller than 11×11 are an error.
func SSIM(x, ref []float64, c, h, w int) (float64, error) {
	if len(x) != c*h*w || len(ref) != c*h*w {
		return 0, fmt.Errorf("restore: SSIM: %d and %d values for a %d×%d×%d image", len(x), len(ref), c, h, w)
	}
	if h < 2*ssimRadius+1 || w < 2*ssimRadius+1 {
		return 0, fmt.Errorf("restore: SSIM needs images of at least %d×%d pixels, got %d×%d", 2*ssimRadius+1, 2*ssimRadius+1, h, w)
	}
	var g [2*ssimRadius + 1]float64
	var sum float64
	for i := range g {
		v := float64(i - ssimRadius)
		g[i] = math.Exp(-0.5 * v * v / (ssimSigma * ssimSigma))
		sum += g[i]
	}
	for i := range g {
		g[i] /= sum
	}
	c1, c2 := ssimK1*ssimK1, ssimK2*ssimK2
	var total float64
	var count int
	for ch := range c {
		off := ch * h * w
		at := func(v []float64, r, col int) float64 { return 0.5 * (v[off+r*w+col] + 1) }
		for r := ssimRadius; r < h-ssimRadius; r++ {
			for col := ssimRadius; col < w-ssimRadius; col++ {
				var mx, my, xx, yy, xy float64
				for a := -ssimRadius; a <= ssimRadius; a++ {
					for b := -ssimRadius; b <= ssimRadius; b++ {
						wt := g[a+ssimRadius] * g[b+ssimRadius]
						vx, vy := at(x, r+a, col+b), at(ref, r+a, col+b)
						mx += wt * vx
						my += wt * vy
						xx += wt * vx * vx
						yy += wt * vy * vy
						xy += wt * vx * vy
					}
				}
				sx, sy, sxy := xx-mx*mx, yy-my*my, xy-mx*my
				total += (2*mx*my + c1) * (2*sxy + c2) / ((mx*mx + my*my + c1) * (sx + sy + c2))
				count++
			}
		}
	}
	return total / float64(count), nil
}
