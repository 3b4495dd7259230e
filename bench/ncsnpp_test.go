package bench

import (
	"math"
	"strings"
	"testing"
)

// WriteNCSNpp prints holdgo's GFLOP/s and % of peak, and PyTorch's % of the
// same peak from the same FLOP count: 1 GFLOP per image in 10 ms is
// 100 GFLOP/s, 50 % of a 200 GFLOP/s peak; PyTorch's 20 ms is 25 %.
func TestWriteNCSNppPeakColumns(t *testing.T) {
	rows := []NCSNppRow{
		{Impl: "holdgo", Model: "ncsnpp-small", Batch: 32, MsPerImage: 10, CPUMsPerImage: 10, GFLOPPerImage: 1,
			GFLOPS: 100, PeakGFLOPS: 200, PeakPct: 50},
		{Impl: "pytorch", Model: "ncsnpp-small", Batch: 32, MsPerImage: 20, CPUMsPerImage: 20, OneDNNISA: "ALL"},
	}
	var sb strings.Builder
	WriteNCSNpp(&sb, rows)
	lines := strings.Split(strings.TrimSpace(sb.String()), "\n")
	if len(lines) != 3 || !strings.Contains(lines[1], "GFLOP/s") || !strings.Contains(lines[1], "% peak") {
		t.Fatalf("header:\n%s", sb.String())
	}
	f := strings.Fields(lines[2])
	if want := []string{"100.0", "50.0", "25.0", "ALL"}; strings.Join(f[len(f)-4:], " ") != strings.Join(want, " ") {
		t.Errorf("row %q: want it to end in %v", lines[2], want)
	}
}

// With several rounds, each row's time is the median of its rounds, the rates
// follow that median, and the table's speed-up is the median of the rounds'
// ratios: holdgo 10, 30, 12 ms against PyTorch 20, 33, 25 ms is 2.00× (the
// ratios 2.00, 1.10, 2.08), not the 2.08× of the medians 25 / 12. A round
// without a PyTorch row leaves the ratio of the medians.
func TestMergeRoundsMedianRatio(t *testing.T) {
	hg := func(ms float64) NCSNppRow {
		return NCSNppRow{Impl: "holdgo", Model: "ncsnpp-small", Batch: 32, MsPerImage: ms, CPUMsPerImage: ms,
			GFLOPPerImage: 1.2, GFLOPS: 1.2 / ms * 1e3, PeakGFLOPS: 200}
	}
	pt := func(ms float64, isa string) NCSNppRow {
		return NCSNppRow{Impl: "pytorch", Model: "ncsnpp-small", Batch: 32, MsPerImage: ms, CPUMsPerImage: ms, OneDNNISA: isa}
	}
	rows := mergeRounds([][]NCSNppRow{{hg(10), pt(20, "ALL")}, {hg(30), pt(33, "AVX2")}, {hg(12), pt(25, "ALL")}})
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	h, p := rows[0], rows[1]
	if h.MsPerImage != 12 || p.MsPerImage != 25 || len(h.RoundMs) != 3 || h.RoundMs[1] != 30 || p.OneDNNISA != "ALL/AVX2" {
		t.Errorf("merged rows: %+v, %+v", h, p)
	}
	if !(math.Abs(h.GFLOPS-100) <= 1e-9) || !(math.Abs(h.PeakPct-50) <= 1e-9) {
		t.Errorf("holdgo at the median 12 ms: %.4f GFLOP/s, %.4f %% of peak; want 100, 50", h.GFLOPS, h.PeakPct)
	}
	var sb strings.Builder
	WriteNCSNpp(&sb, rows)
	if out := sb.String(); !strings.Contains(out, "3 rounds") || !strings.Contains(out, " 2.00× ") {
		t.Errorf("want the header to name 3 rounds and the speed-up 2.00×:\n%s", out)
	}
	rows = mergeRounds([][]NCSNppRow{{hg(10), pt(20, "ALL")}, {hg(30)}, {hg(12), pt(25, "ALL")}})
	sb.Reset()
	WriteNCSNpp(&sb, rows)
	if out := sb.String(); !strings.Contains(out, " 1.88× ") { // 22.5 / 12
		t.Errorf("a round without PyTorch: want the ratio of the medians, 1.88×:\n%s", out)
	}
}
