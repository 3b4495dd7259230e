package main

import (
	"encoding/binary"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeIDX writes n random-looking 8×8 IDX images as DIR/<prefix>-images-idx3-ubyte.
func writeIDX(t *testing.T, dir, prefix string, n int) {
	b := []byte{0, 0, 8, 3}
	for _, d := range []int{n, 8, 8} {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	for i := range n * 64 {
		b = append(b, byte(i*37%251))
	}
	if err := os.WriteFile(filepath.Join(dir, prefix+"-images-idx3-ubyte"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestImageTrainSampleNLL runs the image pipeline end to end on a tiny
// NCSN++: train two steps on IDX images, sample a PNG grid, evaluate bits/dim.
func TestImageTrainSampleNLL(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, "train", 10)
	writeIDX(t, dir, "t10k", 3)
	run := filepath.Join(dir, "run")
	if out, err := runSub(t, trainCommand(), "--data", "mnist:"+dir, "--model", "ncsnpp-tiny", "--steps", "2", "--batch", "2",
		"--lr", "1e-3", "--dropout", "0.1", "--flip", "--out", run, "--log-every", "1"); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	grid := filepath.Join(dir, "grid.png")
	if out, err := runSub(t, sampleCommand(), "--ckpt", run, "--n", "4", "--steps", "3", "--out", grid); err != nil {
		t.Fatalf("sample: %v\n%s", err, out)
	}
	f, err := os.Open(grid)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 2+2*(16+2) || b.Dy() != b.Dx() { // 2×2 grid of 8×8 images, pixels doubled
		t.Fatalf("grid %v", b)
	}
	out, err := runSub(t, nllCommand(), "--ckpt", run, "--n", "1", "--tol", "1e-2")
	if err != nil || !strings.Contains(out, "bits/dim") || !strings.Contains(out, "#test") {
		t.Fatalf("nll: %v\n%s", err, out)
	}
	if _, err := runSub(t, nllCommand(), "--ckpt", run, "--data", "gmm1d"); err == nil {
		t.Fatal("nll accepted point data")
	}
}

// TestTrainTimeLimit: --time-limit stops the run cleanly with a checkpoint.
func TestTrainTimeLimit(t *testing.T) {
	dir := t.TempDir()
	writeIDX(t, dir, "train", 4)
	run := filepath.Join(dir, "run")
	out, err := runSub(t, trainCommand(), "--data", "mnist:"+dir, "--model", "ncsnpp-tiny", "--steps", "100000", "--batch", "1",
		"--time-limit", "300ms", "--out", run)
	if err != nil || !strings.Contains(out, "time limit reached") {
		t.Fatalf("train: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(run, "ckpt.safetensors")); err != nil {
		t.Fatal(err)
	}
}
