package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// 'bench sample' on a shipped checkpoint: the sampler's NFE (two a-ddim steps and the x̂₀ read-out),
// the per-evaluation time derived from the run's wall time, both times positive; bad flags exit 2.
func TestCLIBenchSample(t *testing.T) {
	args := []string{"bench", "sample", "--ckpt", "../../models/fmnist-hold3", "--sampler", "a-ddim", "--grid", "vpmatched",
		"--nfe", "3", "--denoise", "--batch", "2", "--repeats", "1"}
	r := mustRun(t, append(args, "--json")...)
	var rep struct {
		Model     string  `json:"model"`
		Batch     int     `json:"batch"`
		NFE       int     `json:"nfe"`
		Seconds   float64 `json:"seconds"`
		PerSec    float64 `json:"images_per_s"`
		MsPerEval float64 `json:"ms_per_eval_image"`
		Forward   float64 `json:"forward_ms_per_image"`
		Overhead  float64 `json:"overhead"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if rep.Model != "ncsnpp-small" || rep.Batch != 2 || rep.NFE != 3 {
		t.Errorf("model %q, batch %d, NFE %d; want ncsnpp-small, 2, 3", rep.Model, rep.Batch, rep.NFE)
	}
	if !(rep.Seconds > 0) || !(rep.Forward > 0) {
		t.Fatalf("times %v s and %v ms", rep.Seconds, rep.Forward)
	}
	if want := rep.Seconds / 6 * 1e3; !(math.Abs(rep.MsPerEval-want) <= 1e-9*want) {
		t.Errorf("ms per evaluation per image %v, want seconds/(NFE·batch) = %v", rep.MsPerEval, want)
	}
	if !(math.Abs(rep.PerSec-2/rep.Seconds) <= 1e-9*rep.PerSec) || !(math.Abs(rep.Overhead-(rep.MsPerEval/rep.Forward-1)) <= 1e-9) {
		t.Errorf("images/s %v or overhead %v inconsistent with %v s, %v and %v ms", rep.PerSec, rep.Overhead, rep.Seconds, rep.MsPerEval, rep.Forward)
	}
	if out := mustRun(t, args...).stdout; !strings.Contains(out, "forward pass alone") || !strings.Contains(out, "images/s") {
		t.Errorf("text output:\n%s", out)
	}
	for _, bad := range [][]string{{"--batch", "0"}, {"--repeats", "0"}, {"--batch", "-3"}, {"--batch", "65536", "--max-memory", "64MiB"}} {
		if r := holdctl(t, append(args, bad...)...); r.code != 2 {
			t.Errorf("bench sample %v: want exit 2, got %s", bad, r)
		}
	}
	if r := holdctl(t, "bench", "sample", "--ckpt", t.TempDir(), "--nfe", "2"); r.code != 2 || !strings.Contains(r.stderr, "ckpt") {
		t.Errorf("bench sample on an empty directory: want exit 2 naming the checkpoint, got %s", r)
	}
	if r := holdctl(t, append(args, "--sampler", "no-such-sampler")...); r.code != 2 {
		t.Errorf("bench sample with an unknown sampler: want exit 2, got %s", r)
	}
}

// 'sample --forward-mib' sizes the forward passes from a memory budget: the samples equal those of
// the default passes up to float32 rounding; a negative budget is a usage error.
func TestCLISampleForwardMemory(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sample", "--ckpt", "../../models/fmnist-hold3", "--sampler", "a-ddim", "--grid", "vpmatched", "--nfe", "3",
		"--clip", "1", "--n", "10", "--seed", "4"}
	mustRun(t, append(args, "--out", dir+"/a.npy")...)
	mustRun(t, append(args, "--forward-mib", "1", "--out", dir+"/b.npy")...)
	aa, _ := readNPYShape(t, dir+"/a.npy")
	bb, _ := readNPYShape(t, dir+"/b.npy")
	a, b := aa.Data, bb.Data
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%d and %d values", len(a), len(b))
	}
	for i := range a {
		if !(math.Abs(a[i]-b[i]) <= 1e-4) {
			t.Fatalf("value %d: %v with passes of 64, %v with a 1 MiB budget", i, a[i], b[i])
		}
	}
	if r := holdctl(t, append(args, "--forward-mib", "-1", "--out", dir+"/c.npy")...); r.code != 2 || !strings.Contains(r.stderr, "--forward-mib") {
		t.Errorf("--forward-mib -1: want exit 2 naming the flag, got %s", r)
	}
}
