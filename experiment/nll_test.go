package experiment

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/sample"
	"holdgo/train"
)

// ExactNLL of a standard normal in 2-D at (0, 0) and (1, 1): per dimension ½·log 2π and ½·log 2π + ½,
// so the mean is ½·log 2π + ¼ and the standard error ¼; bits are nats over ln 2.
func TestExactNLL(t *testing.T) {
	mix := data.Mixture{Weights: []float64{1}, Means: []float64{0, 0}, Stds: []float64{1}, Dim: 2}
	nats, bits := ExactNLL(mix, []float64{0, 0, 1, 1}, 2)
	want := 0.5*math.Log(2*math.Pi) + 0.25
	if !(math.Abs(nats.Mean-want) < 1e-12) || !(math.Abs(nats.SE-0.25) < 1e-12) {
		t.Errorf("nats %+v, want %v ± 0.25", nats, want)
	}
	if !(math.Abs(bits.Mean-want/math.Ln2) < 1e-12) || !(math.Abs(bits.SE-0.25/math.Ln2) < 1e-12) {
		t.Errorf("bits %+v, want %v ± %v", bits, want/math.Ln2, 0.25/math.Ln2)
	}
}

// HeldOutPoints draws n fresh points of the run's data with the seed (the same points for the same
// seed), or reads at most n points of a file of the model's dimension, refusing another dimension.
func TestHeldOutPoints(t *testing.T) {
	m, err := train.Oracle1D(hold.KindHOLD, 3)
	if err != nil {
		t.Fatal(err)
	}
	x, from, err := HeldOutPoints(m, "", 5, 7)
	if err != nil || len(x) != 5 || !strings.Contains(from, "seed 7") {
		t.Fatalf("%v, %q, %v", x, from, err)
	}
	again, _, _ := HeldOutPoints(m, "", 5, 7)
	for i := range x {
		if x[i] != again[i] {
			t.Fatalf("draws differ for one seed: %v, %v", x, again)
		}
	}
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.npy"), filepath.Join(dir, "two.npy")
	if err := data.WriteNPY32(one, []float32{0.5, -0.25, 0.125}, 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := data.WriteNPY32(two, []float32{1, 2, 3, 4}, 2, 2); err != nil {
		t.Fatal(err)
	}
	x, from, err = HeldOutPoints(m, one, 2, 0)
	if err != nil || len(x) != 2 || x[0] != 0.5 || x[1] != -0.25 || from != one {
		t.Errorf("%v, %q, %v", x, from, err)
	}
	if _, _, err := HeldOutPoints(m, two, 2, 0); err == nil || !strings.Contains(err.Error(), "2-D points, the model is 1-D") {
		t.Errorf("2-D file for a 1-D model: %v", err)
	}
}

// DequantizedImages puts level k in [(k/256)·2 − 1, ((k+1)/256)·2 − 1) and draws the same noise for
// the same seed.
func TestDequantizedImages(t *testing.T) {
	ds := &imagedata.Dataset{N: 2, C: 1, H: 1, W: 3, Pix: []uint8{0, 128, 255, 7, 7, 7}}
	x, err := DequantizedImages(ds, 2, 3)
	if err != nil || len(x) != 6 {
		t.Fatalf("%v, %v", x, err)
	}
	for i, v := range x {
		k := float64(ds.Pix[i])
		if lo, hi := k/128-1, (k+1)/128-1; !(v >= lo && v < hi) {
			t.Errorf("value %d: %v outside [%v, %v)", i, v, lo, hi)
		}
	}
	again, _ := DequantizedImages(ds, 2, 3)
	if again[4] != x[4] {
		t.Errorf("seed 3 twice: %v, %v", x, again)
	}
}

// NLLImages opens images of the model's dimension, refuses others and what is not an image data set,
// and defaults to the run's test split (all of an images: folder).
func TestNLLImages(t *testing.T) {
	dir := t.TempDir()
	fit, small := filepath.Join(dir, "fit.idx"), filepath.Join(dir, "small.idx")
	writeIDX(t, fit, 2, 28)
	writeIDX(t, small, 2, 8)
	im, err := OpenImageModel("../models/fmnist-hold3", "idx:"+fit, 1)
	if err != nil {
		t.Fatal(err)
	}
	m := im.Model
	if ds, spec, err := NLLImages(m, "idx:"+fit); err != nil || ds.Len() != 2 || spec != "idx:"+fit {
		t.Errorf("fitting images: %v, %q, %v", ds, spec, err)
	}
	if _, _, err := NLLImages(m, "idx:"+small); err == nil || !strings.Contains(err.Error(), "images of 64 values, the model was trained on 784") {
		t.Errorf("8×8 images: %v", err)
	}
	if _, _, err := NLLImages(m, "gmm1d"); err == nil || !strings.Contains(err.Error(), "not one") {
		t.Errorf("point data: %v", err)
	}
	if _, spec, _ := NLLImages(m, ""); spec != m.Config.Data+"#test" {
		t.Errorf("default spec %q", spec)
	}
	folder := *m
	folder.Config.Data = "images:" + filepath.Join(dir, "none")
	if _, spec, err := NLLImages(&folder, ""); spec != folder.Config.Data || err == nil {
		t.Errorf("images folder: spec %q, %v", spec, err)
	}
}

// ImageNLL is sample.NLL of the dequantised images (seed) with the ODE's seed+1 and the 8-bit offset.
func TestImageNLL(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imgs.idx")
	writeIDX(t, path, 2, 28)
	im, err := OpenImageModel("../models/fmnist-hold3", "idx:"+path, 1)
	if err != nil {
		t.Fatal(err)
	}
	div := im.Score.(sample.DivScorer)
	cfg := sample.LikelihoodConfig{Eps: 0.5, RTol: 0.9, ATol: 0.9, MaxBatch: 1}
	got, err := ImageNLL(im.Model, div, im.Images, 1, cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	x, err := DequantizedImages(im.Images, 1, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg.OffsetBits = sample.OffsetCentered8Bit
	want, err := sample.NLL(im.SDE, div, x, 784, cfg, 4)
	if err != nil {
		t.Fatal(err)
	}
	if got.BitsPerDim != want.BitsPerDim || got.NFE != want.NFE {
		t.Errorf("%v bits/dim at NFE %d, want %v at %d", got.BitsPerDim, got.NFE, want.BitsPerDim, want.NFE)
	}
}
