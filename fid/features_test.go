package fid

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"holdgo/data"
	"holdgo/layers"
	"holdgo/torchfile"
)

// TestInceptionFeaturesGolden feeds the golden Inception images, mapped to
// holdgo's [−1, 1] range, through InceptionFeatures and compares with the
// PyTorch features of scripts/golden_inception.py (which takes [0, 1]), and
// checks that a gray image gives the features of its RGB repetition.
func TestInceptionFeaturesGolden(t *testing.T) {
	var meta struct {
		Shapes [][]int `json:"shapes"`
	}
	b, err := os.ReadFile("../testdata/golden/inception.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	images, err := data.ReadNPY("../testdata/golden/inception_images.npy")
	if err != nil {
		t.Fatal(err)
	}
	want, err := data.ReadNPY("../testdata/golden/inception_features.npy")
	if err != nil {
		t.Fatal(err)
	}
	f, err := torchfile.Load("../testdata/golden/inception_w16.pth")
	if err != nil {
		t.Fatal(err)
	}
	net, err := layers.LoadInception(f)
	if err != nil {
		t.Fatal(err)
	}
	e := &InceptionFeatures{Net: net}
	shape := meta.Shapes[0]
	n := shape[0] * shape[1] * shape[2]
	x := images.Float32()[:n]
	for i := range x {
		x[i] = 2*x[i] - 1
	}
	got, err := e.Features(x, 1, shape[0], shape[1], shape[2])
	if err != nil {
		t.Fatal(err)
	}
	var maxDiff, maxRef float64
	for j, v := range got {
		maxDiff = max(maxDiff, math.Abs(float64(v)-want.Data[j]))
		maxRef = max(maxRef, math.Abs(want.Data[j]))
	}
	if !(maxDiff/maxRef <= 1e-4) {
		t.Errorf("features of the [−1, 1] image: rel. error %.2g > 1e-4", maxDiff/maxRef)
	}
	plane := shape[1] * shape[2]
	gray := x[:plane]
	rgb := append(append(append([]float32(nil), gray...), gray...), gray...)
	g1, err := e.Features(gray, 1, 1, shape[1], shape[2])
	if err != nil {
		t.Fatal(err)
	}
	g3, _ := e.Features(rgb, 1, 3, shape[1], shape[2])
	for j := range g1 {
		if g1[j] != g3[j] {
			t.Fatalf("gray image feature %d: %v, its RGB repetition %v", j, g1[j], g3[j])
		}
	}
	if err := e.Check(2, 8, 8); err == nil {
		t.Error("2-channel images accepted")
	}
}

// TestQuantize: values go to the nearest of 256 levels, clipped to [−1, 1].
func TestQuantize(t *testing.T) {
	x := []float32{-2, -1, 1, 3, 0, 2*128.0/255 - 1 + 0.001}
	Quantize(x)
	want := []float32{-1, -1, 1, 1, 2*128.0/255 - 1, 2*128.0/255 - 1}
	for i := range x {
		if !(math.Abs(float64(x[i]-want[i])) <= 1e-7) {
			t.Errorf("Quantize[%d] = %v, want %v", i, x[i], want[i])
		}
	}
}
