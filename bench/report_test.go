package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"holdgo/layers"
)

// WriteGemm, WriteTriad and WriteMLP print one line of text, or one JSON object with the command's
// keys (in alphabetical order, as encoding/json writes a map) and the measured values.
func TestWriteReports(t *testing.T) {
	var sb strings.Builder
	gemm := GemmResult{GFLOPS: 50, Time: 2 * time.Millisecond, ISA: "avx2", PeakGFLOPS: 200, PeakPct: 25}
	cfg := GemmConfig{M: 4, K: 5, N: 6, TransB: true, Repeats: 3}
	if err := WriteGemm(&sb, cfg, 2, gemm, true); err != nil {
		t.Fatal(err)
	}
	want := `{"gflops":50,"isa":"avx2","k":5,"m":4,"n":6,"peak_gflops":200,"peak_pct":25,"seconds":0.002,"threads":2,"trans_a":false,"trans_b":true}` + "\n"
	if sb.String() != want {
		t.Errorf("gemm JSON:\n%s\nwant\n%s", sb.String(), want)
	}
	sb.Reset()
	if err := WriteGemm(&sb, cfg, 2, gemm, false); err != nil {
		t.Fatal(err)
	}
	if want := "sgemm 4x5x6 (transA=false transB=true) avx2, 2 thread(s): 50.0 GFLOP/s, 25 % of the 200.0 GFLOP/s FMA peak (median of 3, 2ms)\n"; sb.String() != want {
		t.Errorf("gemm text %q, want %q", sb.String(), want)
	}
	sb.Reset()
	if err := WriteTriad(&sb, 1000, 1, 5, 12.5, true); err != nil {
		t.Fatal(err)
	}
	if want := `{"gbps":12.5,"n":1000,"threads":1}` + "\n"; sb.String() != want {
		t.Errorf("triad JSON %q, want %q", sb.String(), want)
	}
	sb.Reset()
	mlp := MLPResult{Time: time.Millisecond, FLOPs: 3e6, GFLOPS: 3, ISA: "generic", PeakGFLOPS: 6, PeakPct: 50}
	if err := WriteMLP(&sb, 8, 16, 2, 7, mlp, false); err != nil {
		t.Fatal(err)
	}
	if want := "toy MLP train step, batch 8, hidden 16, generic, 2 thread(s): 1.000 ms, 3.00 GFLOP/s, 50.0 % of the 6.0 GFLOP/s FMA peak (median of 7; 3.0 MFLOP per step, op list)\n"; sb.String() != want {
		t.Errorf("mlp text %q, want %q", sb.String(), want)
	}
	sb.Reset()
	if err := WriteMLP(&sb, 8, 16, 2, 7, mlp, true); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(sb.String()), &m); err != nil || m["ms"] != 1.0 || m["gflop"] != 0.003 || m["hidden"] != 16.0 {
		t.Errorf("mlp JSON %s: %v", sb.String(), err)
	}
}

// WritePeak's table has a row per level under a header that names the thread counts, and the
// triad line; its JSON is the report's.
func TestWritePeak(t *testing.T) {
	r := PeakReport{Threads: 1, Active: "avx2", Levels: []PeakLevel{{ISA: "avx2", One: 10, Many: 10, PerCore: 10}, {ISA: "generic", One: 2, Many: 2, PerCore: 2}},
		TriadN: 1 << 20, TriadOne: 5, TriadAll: 5}
	var sb strings.Builder
	if err := WritePeak(&sb, PeakConfig{Threads: 1, Duration: time.Second, Repeats: 3}, r, false); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "windows of 200ms") || strings.Fields(lines[1])[2] != "thread" ||
		!strings.HasPrefix(lines[3], "generic") || !strings.Contains(lines[4], "(12 MiB)") || !strings.HasSuffix(lines[4], "(median of 3)") {
		t.Errorf("peak text:\n%s", sb.String())
	}
	sb.Reset()
	if err := WritePeak(&sb, PeakConfig{}, r, true); err != nil {
		t.Fatal(err)
	}
	var back PeakReport
	if err := json.Unmarshal([]byte(sb.String()), &back); err != nil || back.TriadN != r.TriadN || len(back.Levels) != 2 {
		t.Errorf("peak JSON %s: %v", sb.String(), err)
	}
}

// NewModelInfo counts the preset's parameters (the Fourier weights apart); Write prints the step's
// lines only when a step was measured.
func TestModelInfo(t *testing.T) {
	cfg, err := layers.NCSNppPreset("ncsnpp-tiny", 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := NewModelInfo(cfg)
	if r.Params != layers.NCSNppParamCount(cfg) || r.Model != cfg.Name || (cfg.Embedding == layers.EmbedFourier) != (r.FixedParams == cfg.NF) {
		t.Errorf("%+v for %+v", r, cfg)
	}
	var sb strings.Builder
	if err := r.Write(&sb, false); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sb.String(), "\n"); n != 2 {
		t.Errorf("%d lines without a step:\n%s", n, sb.String())
	}
	r.StepMemory = StepMemory{Batch: 2, Recycle: true, StepGFLOP: 1}
	sb.Reset()
	if err := r.Write(&sb, false); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(sb.String(), "\n"); n != 4 || !strings.Contains(sb.String(), "at batch 2 (recycling)") {
		t.Errorf("%d lines with a step:\n%s", n, sb.String())
	}
	sb.Reset()
	if err := r.Write(&sb, true); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(sb.String()), &m); err != nil || m["params"] != float64(r.Params) || m["batch"] != 2.0 {
		t.Errorf("JSON %s: %v", sb.String(), err)
	}
}

// NCSNppCasesFor keeps the order given and refuses a name that is not a case.
func TestNCSNppCasesFor(t *testing.T) {
	cases, err := NCSNppCasesFor([]string{"ncsnpp-cifar10", "ncsnpp-small"})
	if err != nil || len(cases) != 2 || cases[0].Model != "ncsnpp-cifar10" || cases[1].Batch != 32 {
		t.Errorf("%+v, %v", cases, err)
	}
	if _, err := NCSNppCasesFor([]string{"ncsnpp-small", "resnet"}); err == nil || !strings.Contains(err.Error(), `"resnet"`) {
		t.Errorf("unknown preset: %v", err)
	}
}

// NCSNppAll without cases or PyTorch times nothing, and writes the profile asked for.
func TestNCSNppAllProfile(t *testing.T) {
	var prof bytes.Buffer
	rows, err := NCSNppAll(nil, 1, 1, nil, &prof)
	if err != nil || len(rows) != 0 || prof.Len() == 0 {
		t.Errorf("%d rows, %d profile bytes, %v", len(rows), prof.Len(), err)
	}
}
