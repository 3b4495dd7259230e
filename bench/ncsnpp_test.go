package bench

import (
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
