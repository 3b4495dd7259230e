package fid

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/data"
)

// pixelFeatures is a feature network for tests: an image's features are its first two values.
type pixelFeatures struct{}

func (pixelFeatures) Name() string { return "pixels" }
func (pixelFeatures) Dim() int     { return 2 }
func (pixelFeatures) Check(c, h, w int) error {
	if c*h*w < 2 {
		return errors.New("want at least 2 values")
	}
	return nil
}
func (pixelFeatures) Features(x []float32, n, c, h, w int) ([]float32, error) {
	d := c * h * w
	out := make([]float32, 0, 2*n)
	for i := range n {
		out = append(out, x[i*d], x[i*d+1])
	}
	return out, nil
}

// Run on two .npy files of images: FD and KID of identical sides are 0, the reference statistics
// it saves give the same FD against the samples, and a side it cannot open is an InputError naming
// the side; a run's directory goes to Sample, whose error comes back inside one.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	rows := make([]float32, 0, 40*4)
	for i := range 40 {
		v := float32(math.Sin(float64(i))) // quantised to 8 bits by Extract
		rows = append(rows, v, float32(math.Cos(float64(3*i))), 0, -v)
	}
	imgs := filepath.Join(dir, "a.npy")
	if err := data.WriteNPY32(imgs, rows, 40, 4); err != nil {
		t.Fatal(err)
	}
	stats := filepath.Join(dir, "ref.npz")
	cfg := Config{Ref: imgs, Samples: imgs, Features: pixelFeatures{}, N: 40, Batch: 7, ImageShape: "1,2,2", SaveStats: stats,
		KID: KIDOptions{Subsets: 4, SubsetSize: 10, Seed: 1}, Log: io.Discard}
	rep, err := Run(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FID == nil || !(math.Abs(*rep.FID) < 1e-6) || rep.KID == nil || rep.N != 40 || rep.RefN != 40 || rep.Dim != 2 || rep.Sampling != nil {
		t.Errorf("identical sides: %+v", rep)
	}
	cfg.Ref, cfg.SaveStats, cfg.N = stats, "", 30
	rep, err = Run(cfg)
	if err != nil || rep.FID == nil || rep.KID != nil || rep.N != 30 || !(*rep.FID >= 0) {
		t.Errorf("statistics against 30 images: %+v, %v", rep, err)
	}
	cfg.KIDOnly = true
	var ie *InputError
	if _, err := Run(cfg); !errors.As(err, &ie) || !strings.Contains(ie.Msg, "--kid-only") {
		t.Errorf("--kid-only with statistics: %v", err)
	}
	cfg.KIDOnly, cfg.Samples = false, filepath.Join(dir, "missing.png")
	if _, err := Run(cfg); !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "fid --samples "+cfg.Samples+": ") {
		t.Errorf("missing samples: %v", err)
	}
	run := filepath.Join(dir, "run")
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "ckpt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	errSample := errors.New("no sampler")
	cfg.Samples, cfg.RunFile = run, "ckpt"
	cfg.Sample = func(side, spec string) (ImageSource, *SamplingReport, error) {
		if side != "samples" || spec != run {
			t.Errorf("Sample(%q, %q)", side, spec)
		}
		return ImageSource{}, nil, errSample
	}
	if _, err := Run(cfg); !errors.Is(err, errSample) || !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "fid --samples "+run) {
		t.Errorf("Sample's error: %v", err)
	}
}

// Without Features, Run needs FeatureSpec unless both sides are statistics, and refuses one it cannot
// open; two statistics files need none.
func TestRunOpensFeatures(t *testing.T) {
	dir := t.TempDir()
	stats := filepath.Join(dir, "a.npz")
	st, err := ComputeStats([]float32{0, 1, 1, 0, 2, 2, 1, 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveStats(stats, st); err != nil {
		t.Fatal(err)
	}
	var ie *InputError
	cfg := Config{Ref: stats, Samples: filepath.Join(dir, "x.npy"), Log: io.Discard}
	if _, err := Run(cfg); !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "fid needs --features") {
		t.Errorf("no features: %v", err)
	}
	cfg.FeatureSpec = filepath.Join(dir, "none.safetensors")
	if _, err := Run(cfg); !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "fid: --features ") {
		t.Errorf("features that do not open: %v", err)
	}
	cfg.Samples, cfg.FeatureSpec = stats, ""
	if rep, err := Run(cfg); err != nil || rep.FID == nil || !(*rep.FID < 1e-9) || rep.Features != "statistics files" {
		t.Errorf("two statistics files: %+v, %v", rep, err)
	}
}

// --image-shape is read strictly and honoured by every side of images: a .npy takes it as its shape,
// a folder (or data set, or trained run) whose images have another shape is refused naming both, and
// two statistics files, which hold no images, refuse it instead of ignoring it.
func TestRunImageShape(t *testing.T) {
	for _, c := range []struct {
		flag string
		want [3]int
		err  string
	}{
		{"1,28,28", [3]int{1, 28, 28}, ""}, {" 3, 32 ,32 ", [3]int{3, 32, 32}, ""},
		{"1,8,8junk", [3]int{}, "in decimal"}, {"1,+8,8", [3]int{}, "in decimal"}, {"0x1,8,8", [3]int{}, "in decimal"},
		{"1,8", [3]int{}, "in decimal"}, {"1,8,8,", [3]int{}, "in decimal"}, {"1,,8", [3]int{}, "in decimal"},
		{"5,8,8", [3]int{}, "1 ≤ C ≤ 4"}, {"1,0,8", [3]int{}, "1 ≤ C ≤ 4"}, {"1,4294967296,4294967296", [3]int{}, "1 ≤ C ≤ 4"},
	} {
		got, err := ParseImageShape(c.flag)
		if c.err == "" && (err != nil || got != c.want) || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.flag)) {
			t.Errorf("ParseImageShape(%q) = %v, %v; want %v or an error naming the value and saying %q", c.flag, got, err, c.want, c.err)
		}
	}
	dir := t.TempDir()
	folder := filepath.Join(dir, "imgs")
	if err := os.Mkdir(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		img := image.NewGray(image.Rect(0, 0, 2, 2))
		img.Pix[i] = 200
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(folder, fmt.Sprintf("%d.png", i)), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Ref: folder, Samples: folder, Features: pixelFeatures{}, N: 3, Batch: 2, KIDOnly: true, RunFile: "ckpt.safetensors",
		KID: KIDOptions{Subsets: 2, SubsetSize: 2, Seed: 1}, Log: io.Discard}
	var ie *InputError
	for _, shape := range []string{"3,2,2", "1,4,1", "1,2,2x"} {
		cfg.ImageShape = shape
		if _, err := Run(cfg); !errors.As(err, &ie) || !strings.Contains(ie.Msg, shape) {
			t.Errorf("--image-shape %s on 1×2×2 images: %v, want an InputError naming the value", shape, err)
		}
	}
	cfg.ImageShape = "3,2,2"
	if _, err := Run(cfg); err == nil || !strings.Contains(err.Error(), "fid --ref "+folder) || !strings.Contains(err.Error(), "the images are 1×2×2") {
		t.Errorf("a contradicted --image-shape: %v, want the side and the images' shape named", err)
	}
	cfg.ImageShape = "1,2,2"
	if _, err := Run(cfg); err != nil {
		t.Errorf("--image-shape of the images' own shape: %v", err)
	}
	stats := filepath.Join(dir, "a.npz")
	st, err := ComputeStats([]float32{0, 1, 1, 0, 2, 2, 1, 3}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveStats(stats, st); err != nil {
		t.Fatal(err)
	}
	cfg = Config{Ref: stats, Samples: stats, ImageShape: "1,2,2", Log: io.Discard}
	if _, err := Run(cfg); !errors.As(err, &ie) || !strings.Contains(ie.Msg, "statistics") {
		t.Errorf("--image-shape with two statistics files: %v, want it refused", err)
	}
}
