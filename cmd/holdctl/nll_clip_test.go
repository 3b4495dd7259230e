package main

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNLLClip: nll --clip 1 on a shipped image model integrates the clipped denoiser's flow and says so;
// on a 28×28 image its bits/dim is within 0.3 of the network's own flow (--clip 0, the default),
// whose line does not mention clipping; --clip on a points run exits 2.
func TestNLLClip(t *testing.T) {
	if testing.Short() {
		t.Skip("two likelihood solves of the shipped 28×28 network")
	}
	dir := filepath.Join(t.TempDir(), "imgs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for k := range 2 {
		img := image.NewGray(image.Rect(0, 0, 28, 28))
		for y := 4; y < 24; y++ { // a bright block on black, roughly a garment's silhouette
			for x := 6 + k; x < 22-k; x++ {
				img.SetGray(x, y, color.Gray{Y: uint8(120 + 5*y)})
			}
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("img%d.png", k)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	model := filepath.Join("..", "..", "models", "fmnist-r2-vp")
	bpd := func(clip string) (float64, string) {
		r := mustRun(t, "nll", "--ckpt", model, "--data", "images:"+dir, "--n", "1", "--batch", "1", "--tol", "1e-2", "--threads", "1", "--clip", clip)
		i := strings.Index(r.stdout, " bits/dim")
		f := strings.Fields(r.stdout[:i])
		v, err := strconv.ParseFloat(f[len(f)-3], 64)
		if err != nil {
			t.Fatalf("--clip %s: no bits/dim in %q", clip, r.stdout)
		}
		return v, r.stdout
	}
	plain, out0 := bpd("0")
	clipped, out1 := bpd("1")
	t.Logf("bits/dim: %.4f (network's flow), %.4f (clipped at 1)", plain, clipped)
	if strings.Contains(out0, "clipped") || !strings.Contains(out1, "x̂₀ clipped to ±1") {
		t.Errorf("the result lines do not say which flow was integrated:\n%s%s", out0, out1)
	}
	if !(clipped > 0 && plain > 0 && clipped != plain && clipped-plain <= 0.3 && plain-clipped <= 0.3) {
		t.Errorf("bits/dim %g clipped, %g unclipped: want them different and within 0.3", clipped, plain)
	}
	r := holdctl(t, "nll", "--ckpt", filepath.Join(t.TempDir(), "missing"), "--clip", "-1")
	if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, "--clip") {
		t.Errorf("--clip -1: %s", r)
	}
}
