//go:build !noasm

// Package models holds the shipped image models (models/fmnist-* and models/fmnist-h100-*: EMA weights
// and configuration, made by holdctl train and holdctl export; README "Shipped models") and the FID/KID
// feature network, and checks them end to end: each loads without its data set, samples without
// diverging, and its samples are Fashion-MNIST-like by the shipped classifier's features.
//
// The build tag keeps these checks out of the suite's second run with every assembly path compiled out
// (make test runs the suite twice): they sample real networks for about a minute, and the pure-Go
// fallbacks they would exercise there are tested op by op against the reference device already.
package models

import (
	"math"
	"path/filepath"
	"testing"

	"holdgo/checkpoint"
	"holdgo/fid"
	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/sample"
	"holdgo/train"
)

// shipped are the two sets of three models of the image comparison (docs/images.md), one recipe per set:
// fmnist-* trained on the CPU, fmnist-h100-* by the GPU bundle on an H100 (two leases, ~5,000 steps).
var shipped = []string{"fmnist-hold3", "fmnist-cld", "fmnist-vp", "fmnist-h100-hold3", "fmnist-h100-cld", "fmnist-h100-vp", "fmnist-r2-hold3", "fmnist-r2-vp", "fmnist-r2-cld"}

const (
	classifierPath = "fmnist-classifier.safetensors"
	testImages     = "testdata/fmnist-t10k-500-images-idx3-ubyte.gz" // the first 500 test images
	checkSamples   = 16                                              // per divergence cell
	kidSamples     = 64                                              // per KID check: at 16 the KID's own spread (±130) is a third of the gap to noise
)

// loadShipped builds a shipped model's SDE and network from its directory alone.
func loadShipped(t *testing.T, name string) (*hold.SDE, hold.Scorer, train.RunConfig) {
	t.Helper()
	f, err := checkpoint.Load(filepath.Join(name, "ckpt.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	if f.Meta[train.KeyExported] == "" {
		t.Fatalf("%s: not an exported model", name)
	}
	cfg, err := train.ConfigFromCheckpoint(f)
	if err != nil {
		t.Fatal(err)
	}
	built, err := cfg.Build()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := train.LoadWeights(f, built.Net.Parameters(), true); err != nil {
		t.Fatal(err)
	}
	return built.SDE, &train.NetworkScorer{SDE: built.SDE, Net: built.Net, EDM: cfg.Precond == train.PrecondEDM}, cfg
}

// draw samples n images with a registry sampler at an NFE on its preferred grid, x̂₀ thresholded to the
// data range [−1, 1] (inside the x̂₀ and aligned samplers; through the clipped denoiser's score,
// sample.ClippedScorer, for the others), the read-out or CLD-SGM's denoising step counted in the NFE.
func draw(t *testing.T, sde *hold.SDE, score hold.Scorer, name string, nfe, n int) *sample.Result {
	t.Helper()
	readout := sample.HasReadout(name)
	m, _, err := sample.NewMethod(name, sample.Options{Clip: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !readout {
		if score, err = sample.NewClippedScorer(sde, score, 1); err != nil {
			t.Fatal(err)
		}
	}
	denoise := true // the read-out, or the final noise-free step of CLD-SGM and score_sde
	steps, err := sample.StepsFor(name, nfe, denoise)
	if err != nil {
		t.Fatal(err)
	}
	end := 1e-3 // the t-grids' end for every SDE (score_sde's sampling ε for VP)
	grid, err := sample.NewSDEGrid(sde, sample.PreferredGrid(name), sde.Horizon(), end, steps)
	if err != nil {
		t.Fatal(err)
	}
	s := &sample.Sampler{SDE: sde, Score: score, Method: m, Grid: grid, Dim: 784, Denoise: denoise}
	res, err := s.Sample(n, 1)
	if err != nil {
		t.Fatalf("%s NFE %d: %v", name, nfe, err)
	}
	return res
}

// nativeSampler is each SDE's own sampler: Lie–Trotter for HOLD (SSCS for CLD), Euler–Maruyama for VP.
func nativeSampler(kind string) string {
	if kind == hold.KindVP {
		return "em"
	}
	return "lt"
}

// bestX0Sampler is the x̂₀ sampler chosen on the 1-D study (docs/samplers.md): a-xdpm3 on VP's σ schedule.
const bestX0Sampler = "a-xdpm3"

// kidMargin is the largest KID of a shipped model's samples, as a fraction of the noise images' KID.
const kidMargin = 0.8

// TestShippedModelsHold: on each shipped model the best x̂₀ sampler at NFE 20 and 50 and the native
// sampler at NFE 50 and 100, with x̂₀ thresholded to [−1, 1], leave no sample diverged and no pixel
// beyond ±1.5 (16 samples each). (Without thresholding VP's Euler–Maruyama leaves pixels at 7.7 and 11.1
// at NFE 50 and 100, HOLD's Lie–Trotter 1.52 at NFE 50: docs/images.md.)
func TestShippedModelsHold(t *testing.T) {
	for _, name := range shipped {
		sde, score, _ := loadShipped(t, name)
		for _, cell := range []struct {
			sampler string
			nfe     int
		}{{bestX0Sampler, 20}, {bestX0Sampler, 50}, {nativeSampler(sde.Config().Kind), 50}, {nativeSampler(sde.Config().Kind), 100}} {
			res := draw(t, sde, score, cell.sampler, cell.nfe, checkSamples)
			n := sde.Blocks()
			var worst float64
			for i := range checkSamples {
				for _, v := range res.X[i*n*784 : i*n*784+784] {
					worst = math.Max(worst, math.Abs(v))
					if v != v {
						worst = math.Inf(1)
					}
				}
			}
			if res.Diverged != 0 || !(worst <= 1.5) {
				t.Errorf("%s, %s at NFE %d: %d of %d samples diverged, largest |pixel| %.3g (want none and ≤ 1.5)",
					name, cell.sampler, cell.nfe, res.Diverged, checkSamples, worst)
			}
		}
	}
}

// TestShippedModelsKID: 64 samples of each shipped model at NFE 20 (best x̂₀ sampler) against 400 test
// images, by the shipped classifier's features: KID at most kidMargin (0.8) × that of 64 noise images
// (uniform pixels) against the same test images, and 64 held-out test images well below both. Measured
// 2026-11-27 (AVX-512): noise 1,137; held-out test images 107; HOLD-3 585 ± 40 (0.51 of the noise's), CLD
// 492 ± 41 (0.43), VP 696 ± 47 (0.61) — early models (6,000 steps of batch 32), far from the floor but far from noise too; a
// broken model or sampler lands at the noise's level.
func TestShippedModelsKID(t *testing.T) {
	cls, _, err := fid.LoadClassifier(classifierPath)
	if err != nil {
		t.Fatal(err)
	}
	ext := fid.NewClassifierFeatures(cls)
	test, err := imagedata.Open("idx:"+testImages, imagedata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const ref = 400 // reference: test images 0…399; images 400…463 are the held-out comparison
	features := func(x []float32, n int) []float32 {
		fid.Quantize(x)
		f, err := ext.Features(x, n, 1, 28, 28)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	scaled := func(lo, hi int) []float32 {
		out := make([]float32, (hi-lo)*784)
		for i := lo; i < hi; i++ {
			test.Scale(out[(i-lo)*784:(i-lo+1)*784], test.Pixels(i), false, nil)
		}
		return out
	}
	refFeat := features(scaled(0, ref), ref)
	kid := func(x []float32) (float64, float64) {
		k, se, err := fid.KID(refFeat, features(x, kidSamples), ext.Dim(), fid.KIDOptions{Subsets: 100, SubsetSize: kidSamples, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		return k, se
	}
	noise := make([]float32, kidSamples*784)
	for i := range noise {
		noise[i] = float32(2*math.Mod(float64(i)*0.6180339887498949, 1) - 1) // deterministic uniform-ish pixels
	}
	kNoise, _ := kid(noise)
	kHeld, _ := kid(scaled(ref, ref+kidSamples))
	t.Logf("KID of %d noise images %.4g, of %d held-out test images %.4g", kidSamples, kNoise, kidSamples, kHeld)
	if !(kHeld <= kidMargin*kNoise/2) {
		t.Errorf("held-out test images: KID %.4g, noise %.4g: the check cannot tell data from noise", kHeld, kNoise)
	}
	for _, name := range shipped {
		sde, score, _ := loadShipped(t, name)
		res := draw(t, sde, score, bestX0Sampler, 20, kidSamples)
		q := make([]float32, kidSamples*784)
		n := sde.Blocks()
		for i := range kidSamples {
			for j := range 784 {
				q[i*784+j] = float32(res.X[i*n*784+j])
			}
		}
		k, se := kid(q)
		t.Logf("%s: KID %.4g ± %.2g, %.2f of the noise's", name, k, se, k/kNoise)
		if !(k <= kidMargin*kNoise) {
			t.Errorf("%s: KID of %d samples %.4g, noise images %.4g: want at most %g of the noise's", name, kidSamples, k, kNoise, kidMargin)
		}
	}
}
