package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/checkpoint"
)

// TestCLIExport: an exported image run holds the EMA weights only (the run's "ema." tensors, bit for
// bit, and nothing else), samples the same numbers as the run on a machine without the data set (the
// data directory removed), refuses to be resumed, refuses --raw-weights, and export guards its output.
func TestCLIExport(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeLabelledIDX(t, data, "train", 12, 1)
	run := filepath.Join(dir, "run")
	mustRun(t, "train", "--data", "mnist:"+data, "--model", "ncsnpp-tiny", "--steps", "3", "--batch", "2", "--out", run, "--threads", "1")
	model := filepath.Join(dir, "model")
	mustRun(t, "export", "--ckpt", run, "--out", model)

	src, err := checkpoint.Load(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	exp, err := checkpoint.Load(filepath.Join(model, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	var ema int
	for _, name := range src.Names() {
		if !strings.HasPrefix(name, "ema.") {
			continue
		}
		ema++
		a, err := src.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := exp.Float32(name)
		if err != nil {
			t.Fatalf("export lacks %s: %v", name, err)
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s[%d]: export %g, run %g", name, i, b[i], a[i])
			}
		}
	}
	if got := len(exp.Names()); ema == 0 || got != ema {
		t.Errorf("export holds %d tensors, want the run's %d EMA tensors only", got, ema)
	}

	sampleArgs := func(ckpt, out string) []string {
		return []string{"sample", "--ckpt", ckpt, "--sampler", "a-ddim", "--grid", "vpmatched", "--nfe", "4", "--denoise", "--clip", "1",
			"--n", "3", "--threads", "1", "--out", out}
	}
	fromRun, fromModel := filepath.Join(dir, "run.npy"), filepath.Join(dir, "model.npy")
	mustRun(t, sampleArgs(run, fromRun)...)
	mustRun(t, "export", "--ckpt", run, "--out", model, "--force")
	if err := os.RemoveAll(data); err != nil { // the model must not need the data set
		t.Fatal(err)
	}
	mustRun(t, sampleArgs(model, fromModel)...)
	a, _ := os.ReadFile(fromRun)
	b, _ := os.ReadFile(fromModel)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("samples of the export differ from the run's (%d and %d bytes)", len(b), len(a))
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"train", "--resume", "--out", model, "--steps", "5"}, "shipped model"},
		{[]string{"sample", "--ckpt", model, "--raw-weights", "--n", "1", "--out", filepath.Join(dir, "x.npy")}, "EMA weights only"},
		{[]string{"export", "--ckpt", run, "--out", model}, "--force"},
		{[]string{"export", "--ckpt", run, "--out", run}, "not an exported model"},
		{[]string{"export", "--ckpt", filepath.Join(dir, "nope"), "--out", filepath.Join(dir, "m2")}, "nope"},
	} {
		r := holdctl(t, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("holdctl %s: want exit 2 naming %q, got %s", strings.Join(tc.args, " "), tc.want, r)
		}
	}
}
