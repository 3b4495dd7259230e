package experiment

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"holdgo/data"
	"holdgo/hold"
	"holdgo/rng"
	"holdgo/sample"
)

func TestPaperMixturesAgree(t *testing.T) {
	h, d := hold.PaperMixture(), data.PaperMixture()
	for k := range h.Weights {
		if h.Weights[k] != d.Weights[k] || h.Means[k][0] != d.Means[k] || h.Stds[k] != d.Stds[k] {
			t.Fatalf("hold's and data's paper mixtures differ in component %d", k)
		}
	}
}

func TestModeWidths(t *testing.T) {
	m := data.PaperMixture()
	q := make([]float32, 60000)
	m.Sample(rng.New(3), q)
	for c, w := range modeWidths(q, m) {
		if math.Abs(w-1) > 0.03 {
			t.Errorf("mode %d: width ratio of exact samples %g, want ≈ 1", c, w)
		}
	}
}

func TestMixtureStudySmall(t *testing.T) {
	tab, err := MixtureStudy(StudyConfig{NFEs: []int{20, 40}, Grids: []string{sample.GridQuadratic, sample.GridUniform},
		Samplers: []string{"hold-lt", "cld-lt", "vp-em", "hold-ode"}, ODETols: []float64{1e-2}, Samples: 400, Seed: 1, FloorReps: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 3*2+1 {
		t.Fatalf("%d rows, want 7", len(tab.Rows))
	}
	for _, r := range tab.Rows {
		for _, p := range r.Points {
			if r.Grid != "adaptive" && p.NFE != 20 && p.NFE != 40 {
				t.Errorf("%s %s: NFE %d", r.Sampler, r.Grid, p.NFE)
			}
		}
	}
	if !(tab.FloorMean > 0 && tab.FloorMean < 0.05) {
		t.Errorf("floor %g", tab.FloorMean)
	}
	var md, csv bytes.Buffer
	if err := tab.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := tab.WriteCSV(&csv); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md.String(), "| hold-lt |") || !strings.Contains(md.String(), "Adaptive hold-ode") {
		t.Errorf("markdown:\n%s", md.String())
	}
	if lines := strings.Count(csv.String(), "\n"); lines != 1+6*2+1+2 {
		t.Errorf("CSV has %d lines:\n%s", lines, csv.String())
	}
	if _, err := MixtureStudy(StudyConfig{Samplers: []string{"hold-xyz"}}); err == nil {
		t.Error("unknown sampler accepted")
	}
}
