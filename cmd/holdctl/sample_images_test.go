package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/data"
)

// grayPNGs writes n 4×4 gray images with pixel values (k·37 + 11·i) mod 256 and returns the
// folder and the images in [−1, 1] as the oracle sees them (v/127.5 − 1).
func grayPNGs(t *testing.T, n int) (string, [][]float64) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "imgs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var want [][]float64
	for k := range n {
		img := image.NewGray(image.Rect(0, 0, 4, 4))
		var px []float64
		for i := range 16 {
			v := uint8((k*37 + 11*i) % 256)
			img.SetGray(i%4, i/4, color.Gray{Y: v})
			px = append(px, float64(v)/127.5-1)
		}
		want = append(want, px)
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("img%02d.png", k)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	return dir, want
}

// sample --oracle --data IMAGES samples the empirical distribution of the first --oracle-n
// images: the x̂₀ sampler's read-out lands on those images (and never on the ones left out).
func TestSampleImageOracle(t *testing.T) {
	dir, imgs := grayPNGs(t, 6)
	out := filepath.Join(t.TempDir(), "s.npy")
	if msg, err := runSub(t, sampleCommand(), "--oracle", "--data", "images:"+dir, "--oracle-n", "4", "--sde", "vp",
		"--sampler", "xddim", "--denoise", "--nfe", "20", "--n", "16", "--seed", "3", "--threads", "1", "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	pts, err := data.FromNPY(out)
	if err != nil {
		t.Fatal(err)
	}
	got := pts.Data()
	if len(got) != 16*16 {
		t.Fatalf("%d values, want 16 samples of 16 pixels", len(got))
	}
	// The images sort by name; the oracle holds the first four.
	for s := range 16 {
		best, which := math.Inf(1), -1
		for k, img := range imgs {
			d := 0.0
			for i, v := range img {
				d = max(d, math.Abs(float64(got[s*16+i])-v))
			}
			if d < best {
				best, which = d, k
			}
		}
		if !(best <= 1e-3) || which >= 4 {
			t.Errorf("sample %d: nearest image %d at max abs distance %.3g (want one of the first 4 within 1e-3)", s, which, best)
		}
	}
	for name, args := range map[string][]string{
		"oracle-n too large": {"--oracle-n", "7"},
		"oracle-n one":       {"--oracle-n", "1"},
	} {
		msg, err := runSub(t, sampleCommand(), append([]string{"--oracle", "--data", "images:" + dir, "--n", "2", "--out",
			filepath.Join(t.TempDir(), "x.npy")}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "--oracle-n") {
			t.Errorf("%s: %v\n%s; want an error naming --oracle-n", name, err, msg)
		}
	}
}
