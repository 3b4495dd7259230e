package experiment

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"holdgo/hold"
)

// LossSeries averages the last smooth logged losses (all so far at the start) at each logged step.
func TestLossSeries(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.csv")
	if err := os.WriteFile(path, []byte("step,loss\n1,4\n2,2\n5,6\n9,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := LossSeries("run", path, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "run" || !slices.Equal(s.X, []float64{1, 2, 5, 9}) || !slices.Equal(s.Y, []float64{4, 3, 4, 3.5}) {
		t.Errorf("%+v", s)
	}
	if _, err := LossSeries("x", filepath.Join(t.TempDir(), "none.csv"), 2); err == nil {
		t.Error("missing log: no error")
	}
}

// MomentsRows without checkpoints: the oracle rows, CLD then HOLD, each with a Lie–Trotter sampler of
// the steps asked for; an unknown grid is an error.
func TestMomentsRows(t *testing.T) {
	rows, err := MomentsRows("", "", 10, "quadratic")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Kind != hold.KindCLD || rows[1].Kind != hold.KindHOLD || rows[1].Label != "oracle" ||
		len(rows[1].Sampler.Grid) != 11 || rows[0].Model.SDE.Blocks() != 2 {
		t.Errorf("%+v", rows)
	}
	if _, err := MomentsRows("", "", 10, "nope"); err == nil {
		t.Error("unknown grid: no error")
	}
}

// FlowPanels has one panel per kind, in order.
func TestFlowPanels(t *testing.T) {
	panels, err := FlowPanels([]string{hold.KindVP, hold.KindHOLD}, 2, 1e-3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(panels) != 2 || panels[0].Opt.Title[:2] != "VP" || len(panels[1].Paths) != 2 {
		t.Errorf("%d panels: %q, %d paths", len(panels), panels[0].Opt.Title, len(panels[1].Paths))
	}
}
