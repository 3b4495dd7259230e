package experiment

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/hold"
	"holdgo/internal/parallel"
	"holdgo/sample"
	"holdgo/train"
)

// The demo's sampler draws n 2-D samples of the Swiss-roll oracle, in chunks on two workers of one
// thread (the pool's threads restored), and writes them as a picture and a .npy; the report has the
// distance, the floor and their ratio.
func TestDemoSampleAndScores(t *testing.T) {
	spec := DemoSamplerSpec("lt", 20)
	if spec.Grid != sample.PreferredGrid("lt") || spec.Denoise != sample.HasReadout("lt") || spec.End != hold.DefaultEndTime(hold.KindHOLD) {
		t.Errorf("spec %+v", spec)
	}
	m, _, err := MomentsModel(hold.KindHOLD, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Build(m.SDE, m.Score, 2)
	if err != nil {
		t.Fatal(err)
	}
	threads := parallel.Threads()
	q, res, took, err := DemoSample(s, s.Sample, 2, 60, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 120 || res.NFE != 20 || !(took > 0) || s.Workers != 2 || s.MaxBatch != train.DemoSampleChunk || parallel.Threads() != threads {
		t.Errorf("%d values, NFE %d, %v, workers %d, batch %d, threads %d (was %d)", len(q), res.NFE, took, s.Workers, s.MaxBatch, parallel.Threads(), threads)
	}
	dir := t.TempDir()
	png, npy := filepath.Join(dir, "s.png"), filepath.Join(dir, "s.npy")
	if err := WriteDemoSamples(png, npy, q, 60, "title"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{png, npy} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	var sb strings.Builder
	(&DemoScores{SW: sample.Stat{Mean: 0.02, SE: 0.001}, Floor: sample.Stat{Mean: 0.01, SE: 0.001}}).WriteText(&sb, 59, 60)
	if lines := strings.Split(strings.TrimSpace(sb.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "59 samples") || !strings.HasSuffix(lines[2], "(ratio 2.00)") {
		t.Errorf("report:\n%s", sb.String())
	}
}
