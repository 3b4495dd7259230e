package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"holdgo/data"
	"holdgo/fid"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// fidJSON is the JSON of 'holdctl fid --json'.
type fidJSON struct {
	FID   *float64 `json:"fid"`
	KID   *float64 `json:"kid"`
	KIDSE *float64 `json:"kid_se"`
	N     int      `json:"n"`
	// Sampling is decoded with the command's own type: its keys are checked by name below.
	Sampling *struct {
		Sampler  string  `json:"sampler"`
		NFE      int     `json:"nfe"`
		Diverged int     `json:"diverged"`
		MaxAbs   float64 `json:"max_abs"`
		Beyond15 float64 `json:"frac_beyond_1_5"`
	} `json:"sampling"`
}

func (f fidJSON) String() string {
	v := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	return fmt.Sprintf("fid %s, kid %s ± %s, n %d", v(f.FID), v(f.KID), v(f.KIDSE), f.N)
}

func parseFID(t *testing.T, r result) fidJSON {
	t.Helper()
	var out fidJSON
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("fid --json output: %v\n%s", err, r)
	}
	return out
}

// tinyClassifier writes an untrained classifier for 1×8×8 images with 8-d
// features (its features are as good as any for testing the plumbing).
func tinyClassifier(t *testing.T, dir string) string {
	t.Helper()
	cfg := layers.ClassifierConfig{Channels: 1, Height: 8, Width: 8, Width1: 4, Width2: 4, Features: 8, Classes: 3}
	m, err := layers.NewClassifier(cfg, tensor.NewRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "cls.safetensors")
	if err := fid.SaveClassifier(path, m, fid.ClassifierInfo{Data: "test"}); err != nil {
		t.Fatal(err)
	}
	return path
}

// imagesNPY writes n images of dim values in [−1, 1] (shifted by shift).
func imagesNPY(t *testing.T, path string, n, dim int, seed uint64, shift float64) {
	t.Helper()
	r := rng.New(seed)
	x := make([]float32, n*dim)
	for i := range x {
		x[i] = float32(min(max(0.4*r.Normal()+shift, -1), 1))
	}
	if err := data.WriteNPY32(path, x, n, dim); err != nil {
		t.Fatal(err)
	}
}

// TestCLIFIDImages runs fid --json on two tiny .npy image sets: a set
// against itself gives FD 0 and a KID standard error of 0 (n ≤ 1000: every
// subset is the whole set; the KID itself is slightly negative, as clean-fid's
// estimator is for identical sets); against a shifted set FD and KID are
// positive; --save-stats writes statistics that give the same FD as --ref.
func TestCLIFIDImages(t *testing.T) {
	dir := t.TempDir()
	cls := tinyClassifier(t, dir)
	a, b := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.npy")
	imagesNPY(t, a, 60, 64, 1, 0)
	imagesNPY(t, b, 50, 64, 2, 0.3)
	self := parseFID(t, mustRun(t, "fid", "--features", cls, "--ref", a, "--samples", a, "--json"))
	if self.FID == nil || !(math.Abs(*self.FID) <= 1e-12) || *self.KID > 0 || *self.KIDSE != 0 || self.N != 60 {
		t.Errorf("a set against itself: %v (want FD 0, KID ≤ 0 ± 0, n 60)", self)
	}
	stats := filepath.Join(dir, "a_stats.npz")
	diff := parseFID(t, mustRun(t, "fid", "--features", cls, "--ref", a, "--samples", b, "--save-stats", stats, "--json"))
	if diff.FID == nil || !(*diff.FID > 1e-9) || !(*diff.KID > math.Abs(*self.KID)) || diff.N != 50 {
		t.Errorf("shifted set: %v (want FD and KID > 0, n 50)", diff)
	}
	fromStats := parseFID(t, mustRun(t, "fid", "--features", cls, "--ref", stats, "--samples", b, "--json"))
	if fromStats.FID == nil || !(math.Abs(*fromStats.FID-*diff.FID) <= 1e-9*math.Abs(*diff.FID)) || fromStats.KID != nil {
		t.Errorf("with saved reference statistics: %v, want FD %v and KID null", fromStats, *diff.FID)
	}
}

// TestCLIFIDStats: two pytorch-fid statistics files (mu, sigma) give the FD
// scipy computed for them (scripts/fid_ref.py) and a null KID.
func TestCLIFIDStats(t *testing.T) {
	var ref struct {
		StatsFD float64 `json:"stats_fd"`
	}
	b, err := os.ReadFile("../../testdata/golden/fid_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	out := parseFID(t, mustRun(t, "fid", "--ref", "../../testdata/golden/stats_a.npz", "--samples", "../../testdata/golden/stats_b.npz", "--json"))
	if out.FID == nil || !(math.Abs(*out.FID-ref.StatsFD) <= 1e-6*ref.StatsFD) || out.KID != nil || out.KIDSE != nil {
		t.Errorf("stats files: %v, want FD %v (scipy) and KID null", out, ref.StatsFD)
	}
}

// TestCLIFIDInception scores gray .npy images with the width-16 golden
// Inception weights (.pth through torchfile): KID only, as 5 images are
// fewer than its 128 feature dimensions.
func TestCLIFIDInception(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.npy")
	imagesNPY(t, a, 5, 64, 3, 0)
	w := "inception:../../testdata/golden/inception_w16.pth"
	out := parseFID(t, mustRun(t, "fid", "--features", w, "--ref", a, "--samples", a, "--kid-only", "--json"))
	if out.FID != nil || out.KID == nil || math.IsNaN(*out.KID) || *out.KID > 0 || *out.KIDSE != 0 {
		t.Errorf("inception KID of a set with itself: %v", out)
	}
	r := holdctl(t, "fid", "--features", w, "--ref", a, "--samples", a, "--json")
	if r.code != 2 || !strings.Contains(r.stderr, "FD needs more images than feature dimensions") || !strings.Contains(r.stderr, "--kid-only") {
		t.Errorf("too few images for FD: %s", r)
	}
}

// TestCLIFIDBadInput: wrong image sizes, missing weights, a missing
// feature network: exit status 2 with a message that says what to do.
func TestCLIFIDBadInput(t *testing.T) {
	dir := t.TempDir()
	cls := tinyClassifier(t, dir)
	a, odd := filepath.Join(dir, "a.npy"), filepath.Join(dir, "odd.npy")
	imagesNPY(t, a, 20, 64, 1, 0)
	imagesNPY(t, odd, 20, 50, 1, 0)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--features", cls, "--ref", a, "--samples", odd}, "classifier takes 1×8×8"},
		{[]string{"--features", cls, "--ref", a, "--samples", a, "--image-shape", "3,4,4"}, "holds 48 values"},
		{[]string{"--features", "inception:" + filepath.Join(dir, "pt_inception.pth"), "--ref", a, "--samples", a}, "pt_inception-2015-12-05-6726825d.pth"},
		{[]string{"--features", "inception:" + a, "--ref", a, "--samples", a}, "neither a zip archive"},
		{[]string{"--ref", a, "--samples", a}, "--features"},
		{[]string{"--features", cls, "--ref", a}, "--samples"},
		{[]string{"--features", a, "--ref", a, "--samples", a}, "classifier checkpoint from 'holdctl classifier train'"},
		{[]string{"--features", "inception:../../testdata/golden/inception_w16.pth", "--ref", odd, "--samples", odd, "--kid-only"}, "--image-shape"},
	} {
		r := holdctl(t, append([]string{"fid"}, c.args...)...)
		lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
		if last := lines[len(lines)-1]; r.code != 2 || !strings.Contains(last, c.want) || !strings.HasPrefix(last, "holdctl: ") {
			t.Errorf("fid %v: want exit 2 and a short message with %q, got %s", c.args, c.want, r)
		}
	}
}

// writeLabelledIDX writes n 8×8 images of 3 classes (a bright row at a
// class-dependent place, plus noise) with their labels.
func writeLabelledIDX(t *testing.T, dir, prefix string, n int, seed uint64) {
	t.Helper()
	r := rng.New(seed)
	img := binary.BigEndian.AppendUint32(nil, 0x803)
	for _, d := range []uint32{uint32(n), 8, 8} {
		img = binary.BigEndian.AppendUint32(img, d)
	}
	lab := binary.BigEndian.AppendUint32(nil, 0x801)
	lab = binary.BigEndian.AppendUint32(lab, uint32(n))
	for i := range n {
		y := i % 3
		for p := range 64 {
			v := 40 * r.Float64()
			if p/8 == 1+2*y {
				v += 200
			}
			img = append(img, byte(v))
		}
		lab = append(lab, byte(y))
	}
	if err := os.WriteFile(filepath.Join(dir, prefix+"-images-idx3-ubyte"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, prefix+"-labels-idx1-ubyte"), lab, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCLIClassifierTrain trains the classifier on a tiny easy IDX set, checks
// its reported test accuracy, and uses it as --features on the data sets.
func TestCLIClassifierTrain(t *testing.T) {
	dir := t.TempDir()
	writeLabelledIDX(t, dir, "train", 300, 1)
	writeLabelledIDX(t, dir, "t10k", 60, 2)
	out := filepath.Join(dir, "c.safetensors")
	r := mustRun(t, "classifier", "train", "--data", "mnist:"+dir, "--epochs", "3", "--batch", "32", "--out", out, "--threads", "1")
	_, info, err := fid.LoadClassifier(out)
	if err != nil {
		t.Fatal(err)
	}
	if !(info.TestAccuracy >= 0.9) || !strings.Contains(r.stdout, "test accuracy") {
		t.Errorf("test accuracy %v on an easy 3-class set (want ≥ 0.9): %s", info.TestAccuracy, r)
	}
	res := parseFID(t, mustRun(t, "fid", "--features", out, "--ref", "mnist:"+dir, "--samples", "mnist:"+dir+"#test", "--kid-only", "--json"))
	if res.KID == nil || res.N != 60 {
		t.Errorf("fid on the data sets: %v", res)
	}
	if r := holdctl(t, "classifier", "train", "--data", "nonsense"); r.code != 2 {
		t.Errorf("bad --data: %s", r)
	}
}

// TestCLIFIDTrainedRun scores a trained image run (two NCSN++ steps on 8×8
// IDX images): --samples RUN draws --n samples with the sampler flags.
func TestCLIFIDTrainedRun(t *testing.T) {
	dir := t.TempDir()
	writeLabelledIDX(t, dir, "train", 12, 1)
	run := filepath.Join(dir, "run")
	mustRun(t, "train", "--data", "mnist:"+dir, "--model", "ncsnpp-tiny", "--steps", "2", "--batch", "2", "--out", run, "--threads", "1")
	cls := tinyClassifier(t, dir)
	r := mustRun(t, "fid", "--features", cls, "--ref", "mnist:"+dir, "--samples", run, "--n", "6", "--sampler", "em", "--nfe", "4", "--kid-only", "--json")
	out := parseFID(t, r)
	if out.N != 6 || out.KID == nil || math.IsNaN(*out.KID) || !strings.Contains(r.stderr, "NFE 4") {
		t.Errorf("fid of a trained run: %v\n%s", out, r)
	}
	if s := out.Sampling; s == nil || s.Sampler != "em" || s.NFE != 4 || s.Diverged != 0 || !(s.MaxAbs > 0) || s.Beyond15 < 0 || s.Beyond15 > 1 {
		t.Errorf("fid of a trained run: sampling report %+v", s)
	}
	if r := holdctl(t, "fid", "--features", cls, "--ref", "mnist:"+dir, "--samples", run, "--sampler", "nonsense"); r.code != 2 {
		t.Errorf("unknown sampler: %s", r)
	}
}
