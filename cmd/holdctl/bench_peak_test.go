package main

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"holdgo/internal/isa"
)

// 'bench peak' prints a row per instruction-set level this machine runs
// (positive finite GFLOP/s on 1 and N threads) and the triad bandwidth; very
// short durations, no timed assertions.
func TestCLIBenchPeak(t *testing.T) {
	args := []string{"bench", "peak", "--duration", "10ms", "--threads", "2", "--triad-n", "4096", "--repeats", "1"}
	r := mustRun(t, args...)
	for _, level := range isa.Levels() {
		if !strings.Contains(r.stdout, "\n"+level+" ") {
			t.Errorf("no row for %s:\n%s", level, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "2 threads") || !strings.Contains(r.stdout, "GB/s on 1 thread") {
		t.Errorf("columns or triad line missing:\n%s", r.stdout)
	}
	r = mustRun(t, append(args, "--json")...)
	var rep struct {
		FMA      []map[string]any `json:"fma"`
		TriadOne float64          `json:"triad_gbps_1_thread"`
		TriadAll float64          `json:"triad_gbps_n_threads"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	var levels []string
	for _, row := range rep.FMA {
		levels = append(levels, row["isa"].(string))
		for _, k := range []string{"gflops_1_thread", "gflops_n_threads", "gflops_per_thread"} {
			if g, ok := row[k].(float64); !ok || !(g > 0) || math.IsInf(g, 0) {
				t.Errorf("%v: %s = %v, want a positive number", row["isa"], k, row[k])
			}
		}
	}
	if !slices.Equal(levels, isa.Levels()) {
		t.Errorf("levels %v, want %v", levels, isa.Levels())
	}
	if !(rep.TriadOne > 0) || !(rep.TriadAll > 0) {
		t.Errorf("triad %v and %v GB/s", rep.TriadOne, rep.TriadAll)
	}
	for _, bad := range [][]string{{"--duration", "0s"}, {"--duration", "-1s"}, {"--threads", "-1"}, {"--triad-n", "0"}, {"--repeats", "0"}} {
		r := holdctl(t, append([]string{"bench", "peak"}, bad...)...)
		if r.code != 2 {
			t.Errorf("bench peak %v: want exit 2, got %s", bad, r)
		}
	}
}

// 'bench gemm' and 'bench mlp' print GFLOP/s and % of the FMA peak, in text
// and in JSON.
func TestCLIBenchPeakColumns(t *testing.T) {
	r := mustRun(t, "bench", "gemm", "--m", "16", "--k", "16", "--n", "16", "--repeats", "1")
	if !strings.Contains(r.stdout, "GFLOP/s, ") || !strings.Contains(r.stdout, "% of the ") || !strings.Contains(r.stdout, "FMA peak") {
		t.Errorf("bench gemm: no %% of peak column:\n%s", r.stdout)
	}
	checkPeakJSON(t, "bench gemm", mustRun(t, "bench", "gemm", "--m", "16", "--k", "16", "--n", "16", "--repeats", "1", "--isa", "generic", "--json").stdout)
	r = mustRun(t, "bench", "mlp", "--batch", "8", "--hidden", "8", "--threads", "1", "--repeats", "1")
	if !strings.Contains(r.stdout, "GFLOP/s, ") || !strings.Contains(r.stdout, "% of the ") {
		t.Errorf("bench mlp: no %% of peak column:\n%s", r.stdout)
	}
	checkPeakJSON(t, "bench mlp", mustRun(t, "bench", "mlp", "--batch", "8", "--hidden", "8", "--threads", "1", "--repeats", "1", "--json").stdout)
}

func checkPeakJSON(t *testing.T, what, out string) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	for _, k := range []string{"gflops", "peak_gflops", "peak_pct"} {
		if g, ok := got[k].(float64); !ok || !(g > 0) || math.IsInf(g, 0) {
			t.Errorf("%s: %s = %v, want a positive number (%s)", what, k, got[k], out)
		}
	}
}

// 'model info --batch' reports the step's FLOPs, GFLOP/s and % of peak ('bench ncsnpp': TestCLIBenchNCSNppTorchBestOf).
func TestCLIModelBenchFLOPs(t *testing.T) {
	out, err := runSub(t, modelCommand(), "info", "--model", "ncsnpp-tiny", "--in-channels", "3", "--image-size", "8", "--batch", "2", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, k := range []string{"forward_gflop", "step_gflop", "forward_gflops", "step_gflops", "peak_gflops", "forward_peak_pct", "step_peak_pct"} {
		if g, ok := m[k].(float64); !ok || !(g > 0) {
			t.Errorf("model info: %s = %v, want a positive number", k, m[k])
		}
	}
	if !(m["step_gflop"].(float64) > m["forward_gflop"].(float64)) {
		t.Errorf("the step's %v GFLOP are not more than the forward pass's %v", m["step_gflop"], m["forward_gflop"])
	}
	out, err = runSub(t, modelCommand(), "info", "--model", "ncsnpp-tiny", "--in-channels", "3", "--image-size", "8", "--batch", "2")
	if err != nil || !strings.Contains(out, "% of peak") {
		t.Errorf("model info --batch: no %% of peak: %v\n%s", err, out)
	}
}
