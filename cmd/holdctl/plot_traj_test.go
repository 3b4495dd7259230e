package main

import (
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
