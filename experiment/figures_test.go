package experiment

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"holdgo/hold"
	"holdgo/plot"
	"holdgo/sample"
)

// LossSeries averages the last smooth logged losses (all so far at the start) at each logged step;
// LossFigure draws it.
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
	out := filepath.Join(t.TempDir(), "loss.png")
	if err := LossFigure(out, []plot.Series{s}, 2, ""); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("loss figure: %v", err)
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

// FlowFigure writes a row of one panel per kind; an unknown kind is an error.
func TestFlowFigure(t *testing.T) {
	out := filepath.Join(t.TempDir(), "flow.png")
	if err := FlowFigure(out, []string{hold.KindVP, hold.KindHOLD}, 2, 1e-3, 1); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if cfg, err := png.DecodeConfig(f); err != nil || !(cfg.Width > cfg.Height) {
		t.Errorf("%d×%d, %v", cfg.Width, cfg.Height, err)
	}
	if err := FlowFigure(out, []string{"nope"}, 2, 1e-3, 1); err == nil {
		t.Error("unknown kind: no error")
	}
}

// MomentsFigure and BlocksFigure write their PNGs for the oracles.
func TestMomentsAndBlocksFigures(t *testing.T) {
	dir := t.TempDir()
	rows, err := MomentsRows("", "", 10, "quadratic")
	if err != nil {
		t.Fatal(err)
	}
	if err := MomentsFigure(filepath.Join(dir, "m.png"), rows, 10, 50, "quadratic", 1); err != nil {
		t.Fatal(err)
	}
	m, spec, err := BlocksModel("lt", 10, 3)
	if err != nil || m.SDE.Blocks() != 3 || spec.Grid != sample.GridQuadratic || spec.Steps != 10 {
		t.Fatalf("%+v, %v", spec, err)
	}
	for _, bad := range []struct {
		method string
		order  int
	}{{"nope", 3}, {"lt", 7}} {
		if _, _, err := BlocksModel(bad.method, 10, bad.order); err == nil {
			t.Errorf("BlocksModel(%q, 10, %d): no error", bad.method, bad.order)
		}
	}
	if err := BlocksFigure(filepath.Join(dir, "b.png"), m, spec, 2, 1); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"m.png", "b.png"} {
		if st, err := os.Stat(filepath.Join(dir, name)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
}
