package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLIPlotTrajectory: the trajectory figure of a tiny image run has one tile row per channel of each
// sample on each path (2 paths × n samples × 3 channels for HOLD-3) and one column per printed time,
// and bad sizes or non-image runs exit 2.
func TestCLIPlotTrajectory(t *testing.T) {
	dir := t.TempDir()
	writeLabelledIDX(t, dir, "train", 12, 1)
	writeLabelledIDX(t, dir, "t10k", 6, 2)
	run := filepath.Join(dir, "run")
	mustRun(t, "train", "--data", "mnist:"+dir, "--model", "ncsnpp-tiny", "--steps", "2", "--batch", "2", "--out", run, "--threads", "1")
	out := filepath.Join(dir, "traj.png")
	r := mustRun(t, "plot", "trajectory", "--ckpt", run, "--n", "2", "--times", "4", "--sampler", "lt", "--nfe", "12",
		"--scale", "1", "--threads", "1", "--out", out)
	cols := strings.Count(r.stdout[strings.Index(r.stdout, "t = "):], ",") + 1
	w, h := pngSize(t, out)
	if cols < 2 || cols > 4 || w != 2+cols*(8+2) || h != 2+2*2*3*(8+2) {
		t.Errorf("trajectory PNG %d×%d with %d times (2–4 wanted), want %d×%d\n%s", w, h, cols, 2+cols*10, 2+12*10, r)
	}
	hold1D, _, _ := trainedRuns(t)
	for _, args := range [][]string{
		{"plot", "trajectory", "--ckpt", run, "--n", "0", "--out", out},
		{"plot", "trajectory", "--ckpt", run, "--times", "1", "--out", out},
		{"plot", "trajectory", "--ckpt", run, "--out", filepath.Join(dir, "x.jpg")},
		{"plot", "trajectory", "--ckpt", hold1D, "--out", out},
		{"plot", "trajectory", "--ckpt", run, "--data", "mnist:" + filepath.Join(dir, "nope"), "--out", out},
	} {
		if r := holdctl(t, args...); r.code != 2 {
			t.Errorf("holdctl %s: want exit 2, got %s", strings.Join(args, " "), r)
		}
	}
}

// TestCLIModelX0: model x0 of a tiny image run prints one JSON row per noise level, from σ(T) down to
// --sigma-min, with finite errors; bad sizes exit 2.
func TestCLIModelX0(t *testing.T) {
	dir := t.TempDir()
	writeLabelledIDX(t, dir, "train", 12, 1)
	writeLabelledIDX(t, dir, "t10k", 6, 2)
	run := filepath.Join(dir, "run")
	mustRun(t, "train", "--data", "mnist:"+dir, "--model", "ncsnpp-tiny", "--steps", "2", "--batch", "2", "--out", run, "--threads", "1")
	r := mustRun(t, "model", "x0", "--ckpt", run, "--n", "2", "--levels", "3", "--sigma-min", "0.01", "--json", "--threads", "1")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 {
		t.Fatalf("model x0: %d rows, want 3\n%s", len(lines), r)
	}
	var last struct {
		Sigma, RMSError float64
	}
	for _, l := range lines {
		var row struct {
			T        float64 `json:"t"`
			Sigma    float64 `json:"sigma"`
			RMSError float64 `json:"rms_error"`
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil || !(row.T > 0) || !(row.RMSError >= 0) || math.IsInf(row.RMSError, 0) {
			t.Fatalf("model x0 row %q: %v", l, err)
		}
		last.Sigma, last.RMSError = row.Sigma, row.RMSError
	}
	if !(math.Abs(last.Sigma-0.01) <= 1e-9) {
		t.Errorf("model x0 ends at σ = %g, want 0.01", last.Sigma)
	}
	for _, args := range [][]string{
		{"model", "x0", "--ckpt", run, "--n", "0"},
		{"model", "x0", "--ckpt", run, "--levels", "1"},
		{"model", "x0", "--ckpt", run, "--sigma-min", "-1"},
		{"model", "x0", "--ckpt", filepath.Join(dir, "nope")},
	} {
		if r := holdctl(t, args...); r.code != 2 {
			t.Errorf("holdctl %s: want exit 2, got %s", strings.Join(args, " "), r)
		}
	}
}

// TestCLIPlotLoss: the loss plot of two runs is a PNG of the default size; a run without a log, a
// bad --smooth or a non-PNG output exit 2.
func TestCLIPlotLoss(t *testing.T) {
	hold1D, cld1D, _ := trainedRuns(t)
	out := filepath.Join(t.TempDir(), "loss.png")
	mustRun(t, "plot", "loss", "--run", "hold="+hold1D, "--run", cld1D, "--smooth", "3", "--out", out)
	if w, h := pngSize(t, out); w != 900 || h != 600 {
		t.Errorf("loss plot %d×%d, want 900×600", w, h)
	}
	for _, args := range [][]string{
		{"plot", "loss", "--run", t.TempDir(), "--out", out},
		{"plot", "loss", "--run", hold1D, "--smooth", "0", "--out", out},
		{"plot", "loss", "--run", hold1D, "--out", filepath.Join(t.TempDir(), "x.txt")},
	} {
		if r := holdctl(t, args...); r.code != 2 {
			t.Errorf("holdctl %s: want exit 2, got %s", strings.Join(args, " "), r)
		}
	}
}
