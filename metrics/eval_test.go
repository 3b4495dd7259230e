package metrics

import (
	"path/filepath"
	"strings"
	"testing"

	"holdgo/data"
)

// ReadSamples reads points of the data's dimension and refuses another dimension and too few points
// for the precision and recall's neighbours.
func TestReadSamples(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.npy")
	if err := data.WriteNPY32(path, []float32{0, 1, 2, 3, 4, 5}, 3, 2); err != nil {
		t.Fatal(err)
	}
	swiss, err := data.Open(data.NameSwissRoll, data.DefaultSwissNoise)
	if err != nil {
		t.Fatal(err)
	}
	x, dim, err := ReadSamples(path, swiss, 2)
	if err != nil || dim != 2 || len(x) != 6 || x[5] != 5 {
		t.Errorf("%v, %d, %v", x, dim, err)
	}
	if _, _, err := ReadSamples(path, swiss, 3); err == nil || !strings.Contains(err.Error(), "needs more than 3 samples, the file has 3") {
		t.Errorf("--pr-k 3 of 3 samples: %v", err)
	}
	if _, _, err := ReadSamples(path, data.PaperMixture(), 0); err == nil || !strings.Contains(err.Error(), "holds 2-D points") {
		t.Errorf("2-D samples of 1-D data: %v", err)
	}
	if _, _, err := ReadSamples(filepath.Join(t.TempDir(), "none.npy"), swiss, 0); err == nil {
		t.Error("missing file: no error")
	}
}

// Write prints the report as JSON or as the table of WriteText.
func TestEvalReportWrite(t *testing.T) {
	x := []float32{0.1, 0.2, -0.3, 0.25, 0.5, -0.1, 0, 0.3}
	rep, err := Eval(x, 1, data.PaperMixture(), EvalOptions{Samples: "s.npy", N: 20, KernelPoints: 5, Projections: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var js, text strings.Builder
	if err := rep.Write(&js, true, 4, 5); err != nil || !strings.HasPrefix(js.String(), "{") || !strings.Contains(js.String(), `"data_points":20`) {
		t.Errorf("JSON %s: %v", js.String(), err)
	}
	var want strings.Builder
	if err := rep.WriteText(&want, 4, 5, 5); err != nil {
		t.Fatal(err)
	}
	if err := rep.Write(&text, false, 4, 5); err != nil || text.String() != want.String() {
		t.Errorf("text:\n%s\nwant\n%s", text.String(), want.String())
	}
}
