package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
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

// TestSampleImageDefaults: a trained image model samples with the image defaults when no sampler
// flag is given (a-sde2 on vpmatched, NFE 50, --denoise, --clip 1, said on the first line) and keeps
// pixels in the data range; an explicit sampler keeps its own settings but still gets --clip 1; --clip 0
// turns thresholding off (xdpm2 then leaves [−1.5, 1.5] on the shipped HOLD-3 model: the trap the
// defaults avoid).
func TestSampleImageDefaults(t *testing.T) {
	model := filepath.Join("..", "..", "models", "fmnist-hold3")
	dir := t.TempDir()
	maxAbs := func(path string) float64 {
		pts, err := data.FromNPY(path)
		if err != nil {
			t.Fatal(err)
		}
		m := 0.0
		for _, v := range pts.Data() {
			m = math.Max(m, math.Abs(float64(v)))
		}
		return m
	}
	def := filepath.Join(dir, "def.npy")
	r := mustRun(t, "sample", "--ckpt", model, "--n", "4", "--seed", "2", "--threads", "1", "--out", def)
	first := strings.SplitN(r.stdout, "\n", 2)[0]
	if want := "image model: --sampler a-sde2 --grid vpmatched --nfe 50 --denoise --clip 1"; !strings.HasPrefix(first, want) {
		t.Errorf("first line %q, want it to start with %q", first, want)
	}
	if !strings.Contains(r.stdout, "sampler a-sde2, NFE 50") {
		t.Errorf("defaults not used: %s", r.stdout)
	}
	if m := maxAbs(def); !(m <= 1+1e-6) {
		t.Errorf("default sampling reached |pixel| = %g, want ≤ 1", m)
	}
	own := filepath.Join(dir, "own.npy")
	r = mustRun(t, "sample", "--ckpt", model, "--sampler", "xdpm2", "--nfe", "20", "--n", "8", "--seed", "2", "--threads", "1", "--out", own)
	if first := strings.SplitN(r.stdout, "\n", 2)[0]; !strings.HasPrefix(first, "image model: --clip 1 (") {
		t.Errorf("an explicit sampler: first line %q, want only --clip 1 chosen", first)
	}
	if m := maxAbs(own); !(m <= 1.5) {
		t.Errorf("xdpm2 with the default clip reached |pixel| = %g, want ≤ 1.5", m)
	}
	off := filepath.Join(dir, "off.npy")
	r = mustRun(t, "sample", "--ckpt", model, "--sampler", "xdpm2", "--nfe", "20", "--clip", "0", "--n", "8", "--seed", "2", "--threads", "1", "--out", off)
	if strings.Contains(r.stdout, "image model:") {
		t.Errorf("every flag given, yet defaults were announced: %s", r.stdout)
	}
	if m := maxAbs(off); !(m > 1.5) {
		t.Errorf("--clip 0: |pixel| at most %g; want thresholding off (the shipped HOLD-3 model's xdpm2 goes beyond 1.5)", m)
	}
}

// TestShippedModelsSampleAsBefore: the shipped exports (written before --times sigma and --precond
// existed: their configuration implies mixed times and the native parameterisation) sample bit for bit
// as the code of commit a3649cb did. The golden files are that commit's binary's output with the
// plain-Go kernels (HOLDGO_ISA=generic, one thread), which round the same on every machine:
//
//	HOLDGO_ISA=generic holdctl sample --ckpt models/fmnist-hold3 --sampler a-xdpm3 --grid vpmatched --nfe 10 --denoise --clip 1 --n 2 --seed 5 --threads 1 --out testdata/golden-fmnist-hold3-a-xdpm3.npy
//	HOLDGO_ISA=generic holdctl sample --ckpt models/fmnist-h100-vp --sampler em --grid quadratic --eps 1e-3 --nfe 10 --denoise --clip 1 --n 2 --seed 5 --threads 1 --out testdata/golden-fmnist-h100-vp-em.npy
func TestShippedModelsSampleAsBefore(t *testing.T) {
	cases := []struct {
		model, golden string
		args          []string
	}{
		{"fmnist-hold3", "golden-fmnist-hold3-a-xdpm3.npy", []string{"--sampler", "a-xdpm3", "--grid", "vpmatched"}},
		{"fmnist-h100-vp", "golden-fmnist-h100-vp-em.npy", []string{"--sampler", "em", "--grid", "quadratic", "--eps", "1e-3"}},
	}
	for _, c := range cases {
		out := filepath.Join(t.TempDir(), "s.npy")
		args := append([]string{"sample", "--ckpt", filepath.Join("..", "..", "models", c.model)}, c.args...)
		args = append(args, "--nfe", "10", "--denoise", "--clip", "1", "--n", "2", "--seed", "5", "--threads", "1", "--out", out)
		cmd := exec.Command(holdctlBin, args...)
		cmd.Env = append(os.Environ(), "HOLDGO_ISA=generic")
		if msg, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.model, err, msg)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join("testdata", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: the samples differ from %s (bit for bit)", c.model, c.golden)
		}
	}
}

// editedExport copies the shipped HOLD-3 export into a new directory with its image shape in the
// checkpoint's configuration replaced by shape (the safetensors header rewritten, its length updated).
func editedExport(t *testing.T, shape string) string {
	t.Helper()
	src := filepath.Join("..", "..", "models", "fmnist-hold3")
	b, err := os.ReadFile(filepath.Join(src, "ckpt.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b[:8])
	header := strings.Replace(string(b[8:8+n]), `\"image_shape\":[1,28,28]`, `\"image_shape\":`+shape, 1)
	if header == string(b[8:8+n]) {
		t.Fatal("the export's header has no image_shape [1,28,28]")
	}
	out := make([]byte, 8, len(b)+64)
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	out = append(append(out, header...), b[8+n:]...)
	dir := filepath.Join(t.TempDir(), "edited")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ckpt.safetensors"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir // no config.yaml: the checkpoint alone (a config.yaml would contradict it)
}

// TestEditedConfigRefused: a config.yaml that contradicts the checkpoint beside it (an edit, or a file
// copied from another run) is refused by sample, nll and train --resume with exit 2 naming the key;
// the unedited file, and one that differs only in what a resume changes (steps), are accepted.
func TestEditedConfigRefused(t *testing.T) {
	src := filepath.Join("..", "..", "models", "fmnist-hold3")
	dir := filepath.Join(t.TempDir(), "export")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"ckpt.safetensors", "config.yaml"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "config.yaml" {
			b = []byte(strings.Replace(strings.Replace(string(b), "sde: hold", "sde: vp", 1), "steps: 6000", "steps: 7000", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "s.npy")
	r := holdctl(t, "sample", "--ckpt", dir, "--n", "1", "--nfe", "2", "--sampler", "em", "--threads", "1", "--out", out)
	if r.code != 2 || !strings.Contains(r.stderr, "sde: stored hold, given vp") || strings.Contains(r.stderr, "steps:") {
		t.Errorf("sample with an edited config.yaml: %s", r)
	}
	r = holdctl(t, "nll", "--ckpt", dir, "--n", "1", "--threads", "1")
	if r.code != 2 || !strings.Contains(r.stderr, "contradicts the checkpoint") {
		t.Errorf("nll with an edited config.yaml: %s", r)
	}
	run, _ := pointsRun(t, t.TempDir())
	cfg := filepath.Join(run, "config.yaml")
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(b), "lr: 0.001", "lr: 0.5", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r = holdctl(t, "train", "--resume", "--out", run, "--threads", "1", "--steps", "0")
	if r.code != 2 || !strings.Contains(r.stderr, "lr: stored 0.001, given 0.5") {
		t.Errorf("--resume with an edited config.yaml: %s", r)
	}
	if got, _ := os.ReadFile(cfg); !strings.Contains(string(got), "lr: 0.5") {
		t.Error("the refused resume rewrote config.yaml")
	}
	if err := os.WriteFile(cfg, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, "train", "--resume", "--out", run, "--threads", "1", "--steps", "0")
}

// TestSampleHugeImageShape: an export whose image shape was edited to 3000×3000 (or to the largest
// side imagedata accepts) is refused by sample, nll and fid with exit 2 naming the memory budget,
// before anything large is allocated, instead of ending in Go's fatal out-of-memory.
func TestSampleHugeImageShape(t *testing.T) {
	for _, shape := range []string{"[1,3000,3000]", "[4,16384,16384]"} {
		dir := editedExport(t, shape)
		out := filepath.Join(t.TempDir(), "s.npy")
		for _, args := range [][]string{
			{"sample", "--ckpt", dir, "--n", "1", "--threads", "1", "--out", out},
			{"nll", "--ckpt", dir, "--n", "1", "--threads", "1", "--data", "fashion-mnist:/nonexistent#test"},
		} {
			r := holdctl(t, args...)
			if r.code != 2 || !strings.Contains(r.stderr, "memory budget") {
				t.Errorf("%s with image shape %s: %s", args[0], shape, r)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("image shape %s: an output was written", shape)
		}
	}
}

// TestOutputsStayOutOfDataSets: an output inside an image folder the command reads — replacing an
// image, or a new file that would join the data set, at any depth, with or without --force — is
// refused with exit 2 and nothing in the folder changes; beside the folder it is written.
func TestOutputsStayOutOfDataSets(t *testing.T) {
	dir, _ := grayPNGs(t, 4)
	before := snapshot(t, dir)
	base := []string{"sample", "--oracle", "--data", "images:" + dir, "--oracle-n", "4", "--sde", "vp",
		"--sampler", "xddim", "--nfe", "4", "--n", "2", "--threads", "1"}
	for _, args := range [][]string{
		{"--out", filepath.Join(dir, "img00.png")},
		{"--out", filepath.Join(dir, "img00.png"), "--force"},
		{"--out", filepath.Join(dir, "new.png")},
		{"--out", filepath.Join(dir, "s.npy")},
	} {
		r := holdctl(t, append(append([]string{}, base...), args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, "inside the data set") {
			t.Errorf("%v: %s", args, r)
		}
	}
	if after := snapshot(t, dir); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the data set changed:\nbefore %v\nafter  %v", before, after)
	}
	mustRun(t, append(append([]string{}, base...), "--out", filepath.Join(filepath.Dir(dir), "grid.png"))...)
}
