package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/bench"
)

// 'bench ncsnpp' runs the PyTorch script once per --onednn-isa value and keeps,
// per model and pass, the fastest row: a stand-in script whose times depend on
// ONEDNN_MAX_CPU_ISA (AVX2 faster forward, ALL faster backward) must come back as
// the per-row minimum with its ISA; a run that fails is skipped with a message.
// The script refuses to run without the glibc malloc tuning (bench.TorchMalloc).
func TestCLIBenchNCSNppTorchBestOf(t *testing.T) {
	script := filepath.Join(t.TempDir(), "fake_torch.sh")
	body := `#!/bin/sh
[ "$MALLOC_TRIM_THRESHOLD_" = 68719476736 ] || { echo "malloc not tuned" >&2; exit 1; }
case "$ONEDNN_MAX_CPU_ISA" in
ALL) f=30; b=90 ;;
AVX2) f=20; b=120 ;;
*) echo "unsupported ISA" >&2; exit 1 ;;
esac
echo "[{\"model\":\"ncsnpp-small\",\"batch\":32,\"backward\":false,\"ms_per_image\":$f,\"threads\":1},` +
		`{\"model\":\"ncsnpp-small\",\"batch\":32,\"backward\":true,\"ms_per_image\":$b,\"threads\":1}]"
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, "bench", "ncsnpp", "--models", "ncsnpp-small", "--threads", "1", "--repeats", "1",
		"--python", "/bin/sh", "--script", script, "--onednn-isa", "ALL,BOGUS,AVX2", "--json")
	if !strings.Contains(r.stderr, "ONEDNN_MAX_CPU_ISA=BOGUS) skipped") {
		t.Errorf("the failing run is not reported:\n%s", r)
	}
	var rows []bench.NCSNppRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		t.Fatalf("%v\n%s", err, r)
	}
	want := map[bool]bench.NCSNppRow{false: {MsPerImage: 20, OneDNNISA: "AVX2"}, true: {MsPerImage: 90, OneDNNISA: "ALL"}}
	n := 0
	for _, row := range rows {
		if row.Impl == "holdgo" && !(row.GFLOPPerImage > 0 && row.GFLOPS > 0 && row.PeakGFLOPS > 0 && row.PeakPct > 0) {
			t.Errorf("holdgo row without FLOPs or %% of peak: %+v", row)
		}
		if row.Impl != "pytorch" {
			continue
		}
		n++
		if w := want[row.Backward]; row.MsPerImage != w.MsPerImage || row.OneDNNISA != w.OneDNNISA {
			t.Errorf("backward=%v: got %.0f ms under %s, want %.0f ms under %s", row.Backward, row.MsPerImage, row.OneDNNISA,
				w.MsPerImage, w.OneDNNISA)
		}
	}
	if n != 2 {
		t.Errorf("%d PyTorch rows, want 2:\n%s", n, r.stdout)
	}
}

// Bad --onednn-isa, --threads or --rounds values are usage errors (exit 2, one line)
// before anything runs; a PyTorch time that is not a positive number is an
// error, not a row.
func TestCLIBenchNCSNppBadInput(t *testing.T) {
	for _, args := range [][]string{{"--onednn-isa", ""}, {"--onednn-isa", ","}, {"--onednn-isa", "AVX2;rm -rf /"},
		{"--onednn-isa", "ALL,AVX2="}, {"--threads", "-1"}, {"--threads", "100000"}, {"--rounds", "0"}, {"--rounds", "-3"}} {
		r := holdctl(t, append([]string{"bench", "ncsnpp", "--models", "ncsnpp-small", "--repeats", "1"}, args...)...)
		if r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("bench ncsnpp %q: want exit 2 with one line, got %s", args, r)
		}
	}
	script := filepath.Join(t.TempDir(), "neg.sh")
	body := `#!/bin/sh
echo '[{"model":"ncsnpp-small","batch":32,"backward":false,"ms_per_image":-1,"threads":1}]'
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	r := holdctl(t, "bench", "ncsnpp", "--models", "ncsnpp-small", "--threads", "1", "--repeats", "1",
		"--python", "/bin/sh", "--script", script)
	if r.code == 0 || !strings.Contains(r.stderr, "want a positive number") {
		t.Errorf("a negative PyTorch time: want an error, got %s", r)
	}
}
