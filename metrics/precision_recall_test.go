package metrics

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// TestPrecisionRecallMatchesScipy compares with the brute-force float64 evaluation of
// scripts/pr_ref.py (scipy's cdist), verdict by verdict: a 2-D mixture with outliers, 8-D
// Gaussians at k = 3 and 5, and an integer grid whose distances tie exactly with the radii.
func TestPrecisionRecallMatchesScipy(t *testing.T) {
	raw, err := os.ReadFile("../testdata/golden/pr_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Cases []struct {
			Name              string
			K, Dim            int
			Real, Gen         []float64
			Precision, Recall float64
			GenIn             string `json:"gen_in"`
			RealIn            string `json:"real_in"`
		}
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Cases) != 4 {
		t.Fatalf("%d cases in the golden file, want 4", len(ref.Cases))
	}
	f32 := func(v []float64) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	verdicts := func(v []bool) string {
		var b strings.Builder
		for _, in := range v {
			b.WriteByte("01"[btoi(in)])
		}
		return b.String()
	}
	for _, c := range ref.Cases {
		got, err := PrecisionRecall(f32(c.Real), f32(c.Gen), c.Dim, c.K)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if got.Precision != c.Precision || got.Recall != c.Recall {
			t.Errorf("%s: precision %v recall %v, scipy %v %v", c.Name, got.Precision, got.Recall, c.Precision, c.Recall)
		}
		if g := verdicts(got.GenIn); g != c.GenIn {
			t.Errorf("%s: generated-point verdicts differ from scipy's", c.Name)
		}
		if r := verdicts(got.RealIn); r != c.RealIn {
			t.Errorf("%s: real-point verdicts differ from scipy's", c.Name)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Identical sets are inside each other's manifold; disjoint far-apart sets are not.
func TestPrecisionRecallClosedCases(t *testing.T) {
	x := []float32{0, 0, 1, 0, 0, 1, 1, 1, 2, 2}
	pr, err := PrecisionRecall(x, x, 2, 3)
	if err != nil || pr.Precision != 1 || pr.Recall != 1 {
		t.Errorf("identical sets: %+v, %v", pr, err)
	}
	far := make([]float32, len(x))
	for i, v := range x {
		far[i] = v + 100
	}
	pr, err = PrecisionRecall(x, far, 2, 3)
	if err != nil || pr.Precision != 0 || pr.Recall != 0 {
		t.Errorf("disjoint sets: %+v, %v", pr, err)
	}
	for _, bad := range []struct {
		x, y   []float32
		dim, k int
	}{{x, x, 2, 0}, {x, x, 2, 5}, {x, x[:3], 2, 1}, {x, x, 0, 1}} {
		if _, err := PrecisionRecall(bad.x, bad.y, bad.dim, bad.k); err == nil || !strings.Contains(err.Error(), "precision/recall") {
			t.Errorf("dim %d k %d sizes %d %d: want an error, got %v", bad.dim, bad.k, len(bad.x), len(bad.y), err)
		}
	}
}
