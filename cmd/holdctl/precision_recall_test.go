package main

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"holdgo/data"
	"holdgo/metrics"
	"holdgo/tensor"
)

// eval's improved precision and recall on the multi Swiss roll: exact data score like the floor
// overall and on every roll; moving the points of one roll off its spiral (by 0.05, far beyond the
// k-NN radius of ~1e-2 at this size) drops that roll's precision and recall and no other roll's.
func TestCLIEvalPrecisionRecall(t *testing.T) {
	dir := t.TempDir()
	roll := data.PaperSwissRoll()
	const n = 2000
	pts := data.Draw(roll, tensor.NewRNG(5), n)
	exact, moved := filepath.Join(dir, "exact.npy"), filepath.Join(dir, "moved.npy")
	if err := data.WriteNPY32(exact, pts, n, 2); err != nil {
		t.Fatal(err)
	}
	shifted := append([]float32(nil), pts...)
	for i := 0; i < n; i++ {
		if roll.Roll(float64(pts[2*i]), float64(pts[2*i+1])) == 2 {
			shifted[2*i] += 0.05
		}
	}
	if err := data.WriteNPY32(moved, shifted, n, 2); err != nil {
		t.Fatal(err)
	}
	eval := func(path string) *metrics.RollsReport {
		r := mustRun(t, "eval", "--data", "swissroll", "--n", "2000", "--kernel-points", "100", "--projections", "8", "--json", path)
		var rep metrics.EvalReport
		if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
			t.Fatalf("eval JSON: %v\n%s", err, r.stdout)
		}
		if rep.PR == nil || rep.PR.K != 3 || len(rep.PR.Rolls) != 5 {
			t.Fatalf("no precision/recall per roll in %s", r.stdout)
		}
		return rep.PR
	}
	near := func(v, floor float64) bool { return v >= 0.95*floor && v <= 1.05*floor }
	pr := eval(exact)
	if !near(pr.Precision, pr.FloorPrecision) || !near(pr.Recall, pr.FloorRecall) || !(pr.FloorPrecision >= 0.8) {
		t.Errorf("exact data: %+v", pr)
	}
	for i, g := range pr.Rolls {
		if !near(g.Precision, g.FloorPrecision) || !near(g.Recall, g.FloorRecall) || g.Samples < 300 || g.Data < 300 {
			t.Errorf("exact data, roll %d: %+v", i+1, g)
		}
	}
	pr = eval(moved)
	for i, g := range pr.Rolls {
		off := g.Precision < 0.2 && g.Recall < 0.2
		if (i == 2) != off {
			t.Errorf("roll 3 moved: roll %d precision %.3f recall %.3f (floor %.3f %.3f)", i+1, g.Precision, g.Recall, g.FloorPrecision, g.FloorRecall)
		}
	}
}
