package hold

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
)

// Reference vectors (docs/math.md#verification): testdata/hold_vectors.json (Van Loan's block exponential
// in mpmath at 160 digits, 30-digit strings) and testdata/dense_vectors.json (testdata/gen_dense.py, mpmath
// at 160 digits, 25 digits).

type vecForward struct {
	L     string     `json:"L"`
	Alpha string     `json:"alpha"`
	T     string     `json:"t"`
	ExpF  [][]string `json:"expF"`
	Sigma [][]string `json:"Sigma"`
	Chol  [][]string `json:"chol"`
	Ell   string     `json:"ell"`
}

type vecAStep struct {
	L      string     `json:"L"`
	H      string     `json:"h"`
	ExpMA  [][]string `json:"expMA"`
	CholCA [][]string `json:"chol_C_A"`
}

type vecSystem struct {
	Forward []vecForward `json:"forward"`
	AStep   []vecAStep   `json:"A_step"`
}

func loadVectors(t *testing.T, name string) map[string]vecSystem {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	out := map[string]vecSystem{}
	for _, key := range []string{"hold2", "hold3", "hold4"} {
		var s vecSystem
		if err := json.Unmarshal(all[key], &s); err != nil {
			t.Fatalf("%s %s: %v", name, key, err)
		}
		out[key] = s
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func numMat(t *testing.T, rows [][]string) [][]float64 {
	out := make([][]float64, len(rows))
	for i, r := range rows {
		out[i] = make([]float64, len(r))
		for j, s := range r {
			out[i][j] = num(t, s)
		}
	}
	return out
}

// The error measure of the acceptance criteria: relative error, except that an entry is never judged
// against less than 1e-3 of its natural scale (so entries that cross zero do not blow up).
func relErr(got, ref, scale float64) float64 {
	den := math.Max(math.Abs(ref), 1e-3*scale)
	if den == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-ref) / den
}

// covErr: natural scale √(Σ_ii Σ_jj).
func covErr(got *Matrix, ref [][]float64) float64 {
	var worst float64
	for i := range ref {
		for j := range ref {
			worst = math.Max(worst, relErr(got.At(i, j), ref[i][j], math.Sqrt(ref[i][i]*ref[j][j])))
		}
	}
	return worst
}

// rowErr: natural scale is the row's largest entry (factors and mean maps).
func rowErr(got *Matrix, ref [][]float64) float64 {
	var worst float64
	for i := range ref {
		var scale float64
		for _, v := range ref[i] {
			scale = math.Max(scale, math.Abs(v))
		}
		for j := range ref[i] {
			worst = math.Max(worst, relErr(got.At(i, j), ref[i][j], scale))
		}
	}
	return worst
}

// worstTable records the worst error per label and prints it sorted.
type worstTable map[string]float64

func (w worstTable) add(label string, e float64) {
	if e > w[label] || math.IsNaN(e) {
		w[label] = e
	}
}

func (w worstTable) check(t *testing.T, limit func(label string) float64) {
	t.Helper()
	keys := make([]string, 0, len(w))
	for k := range w {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lim := limit(k)
		t.Logf("%-40s worst %.2e (limit %.0e)", k, w[k], lim)
		if !(w[k] <= lim) {
			t.Errorf("%s: worst error %.3e exceeds %.0e", k, w[k], lim)
		}
	}
}

func holdSDE(t *testing.T, order int, l, alpha float64) *SDE {
	t.Helper()
	cfg := DefaultConfig(KindHOLD)
	cfg.Order, cfg.L, cfg.Alpha, cfg.T = order, l, alpha, 12
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// limit for HOLD-n entries: 1e-12 for n = 3; for n = 2, 4 1e-9 (t ≥ 1e-3, A-step) and 1e-6 below.
func acceptanceLimit(label string) float64 {
	var n int
	var regime string
	fmt.Sscanf(label, "hold%d %s", &n, &regime)
	switch {
	case n == 3:
		return 1e-12
	case regime == "small-t":
		return 1e-6
	default:
		return 1e-9
	}
}

func regimeOf(tm float64) string {
	if tm < 1e-3 {
		return "small-t"
	}
	return "t>=1e-3"
}

func checkForward(t *testing.T, w worstTable, system string, rows []vecForward) {
	order := int(system[4] - '0')
	for _, r := range rows {
		l, alpha, tm := num(t, r.L), num(t, r.Alpha), num(t, r.T)
		k := holdSDE(t, order, l, alpha).Kernel(tm)
		prefix := system + " " + regimeOf(tm) + " "
		w.add(prefix+"mean", rowErr(&k.Mean, numMat(t, r.ExpF)))
		w.add(prefix+"sigma", covErr(&k.Sigma, numMat(t, r.Sigma)))
		w.add(prefix+"chol", rowErr(&k.Chol, numMat(t, r.Chol)))
		w.add(prefix+"ell", relErr(k.Ell, num(t, r.Ell), 0))
	}
}

func checkAStep(t *testing.T, w worstTable, system string, rows []vecAStep) {
	order := int(system[4] - '0')
	for _, r := range rows {
		sde := holdSDE(t, order, num(t, r.L), 0.02)
		st := sde.AStep(sde.Horizon(), num(t, r.H))
		w.add(system+" astep expA", rowErr(&st.ExpA, numMat(t, r.ExpMA)))
		w.add(system+" astep cholA", rowErr(&st.CholA, numMat(t, r.CholCA)))
	}
}

// TestKernelVectors: HOLD-3 (closed form) and HOLD-2/4 (double-double series path) against the 30-digit
// vectors of docs/math.md#verification: L ∈ {1, 2}, α ∈ {0.01, 0.04}, t ∈ {1e-5 … 5}, h ∈ {1e-3, 0.01, 0.1}.
func TestKernelVectors(t *testing.T) {
	vec := loadVectors(t, "hold_vectors.json")
	w := worstTable{}
	for _, system := range []string{"hold2", "hold3", "hold4"} {
		checkForward(t, w, system, vec[system].Forward)
		checkAStep(t, w, system, vec[system].AStep)
	}
	w.check(t, acceptanceLimit)
}

// TestKernelDense: dense scans from gen_dense.py: t on a log grid over [1e-5, 12] with α ∈ {0, 0.02},
// L = 2, and the A-step over h ∈ [1e-4, 0.5].
func TestKernelDense(t *testing.T) {
	vec := loadVectors(t, "dense_vectors.json")
	w := worstTable{}
	for _, system := range []string{"hold2", "hold3", "hold4"} {
		checkForward(t, w, system, vec[system].Forward)
		checkAStep(t, w, system, vec[system].AStep)
	}
	w.check(t, acceptanceLimit)
}
