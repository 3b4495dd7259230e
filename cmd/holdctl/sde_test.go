package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"holdgo/internal/budget"
	"holdgo/tensor"

	"github.com/urfave/cli/v2"
)

// runInProcess runs `holdctl args…` through the real app in this process and returns stdout and the
// exit status main would give.
func runInProcess(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &stdout, &stderr
	err := app.Run(append([]string{"holdctl"}, args...))
	code := 0
	if err != nil {
		code = 1
		var exit cli.ExitCoder
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		}
		t.Logf("holdctl %s: %v", strings.Join(args, " "), err)
	}
	return stdout.String(), code
}

// runSDECommand runs `holdctl sde args…`.
func runSDECommand(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runInProcess(t, append([]string{"sde"}, args...)...)
}

func TestSDEKernelJSON(t *testing.T) {
	out, code := runSDECommand(t, "--sde", "hold", "--order", "3", "--L", "2", "--alpha", "0.02", "--t", "0.5", "--json")
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	// The key order of the format.
	wantPrefix := `{"sde":"hold","order":3,"L":2,"alpha":0.02,"t":0.5,"mean":[`
	if !strings.HasPrefix(out, wantPrefix) {
		t.Fatalf("output %q does not start with %q", out, wantPrefix)
	}
	var got struct {
		Mean  []float64   `json:"mean"`
		Sigma [][]float64 `json:"sigma"`
		Chol  [][]float64 `json:"chol"`
		Ell   float64     `json:"ell"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// Closed forms at t = 0.5 (docs/math.md#hold-3-closed-form): f11 = x(1 + y + y²/2), f21 = −x(y + 3y²/2), f31 = (√10/2)x y².
	x, y := math.Exp(-0.5), -math.Expm1(-0.5)
	want := []float64{x * (1 + y + y*y/2), -x * (y + 1.5*y*y), math.Sqrt(10) / 2 * x * y * y}
	for i := range want {
		if !(math.Abs(got.Mean[i]-want[i]) <= 1e-15) {
			t.Errorf("mean[%d] = %.17g, want %.17g", i, got.Mean[i], want[i])
		}
	}
	if len(got.Sigma) != 3 || len(got.Chol) != 3 {
		t.Fatalf("want 3×3 sigma and chol, got %v %v", got.Sigma, got.Chol)
	}
	// chol·cholᵀ = sigma, and ell = 1/chol[2][2]
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			var s float64
			for k := 0; k < 3; k++ {
				s += got.Chol[i][k] * got.Chol[j][k]
			}
			if !(math.Abs(s-got.Sigma[i][j]) <= 1e-15) {
				t.Errorf("chol·cholᵀ[%d][%d] = %g, sigma %g", i, j, s, got.Sigma[i][j])
			}
		}
	}
	if !(math.Abs(got.Ell*got.Chol[2][2]-1) <= 1e-15) {
		t.Errorf("ell %g is not 1/chol[2][2] = %g", got.Ell, 1/got.Chol[2][2])
	}
}

func TestSDEAStepJSON(t *testing.T) {
	out, code := runSDECommand(t, "--sde", "hold", "--L", "2", "--astep", "0.01", "--json")
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	var got map[string][][]float64
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got["expA"]) != 3 || len(got["cholA"]) != 3 {
		t.Fatalf("want exactly expA and cholA (3×3), got %s", out)
	}
	// expA = exp(hF)ᵀ: entry (0,1) is l12 = −f12 = −x(y + 3y²/2) (docs/math.md#a-step)
	x, y := math.Exp(-0.01), -math.Expm1(-0.01)
	if want := -x * (y + 1.5*y*y); !(math.Abs(got["expA"][0][1]-want) <= 1e-17) {
		t.Errorf("expA[0][1] = %.17g, want %.17g", got["expA"][0][1], want)
	}
	// √L·cholA[0][0] = y^{5/2}·√(6 − 5y)
	if want := math.Pow(y, 2.5) * math.Sqrt(6-5*y) / math.Sqrt(2); !(math.Abs(got["cholA"][0][0]/want-1) <= 1e-13) {
		t.Errorf("cholA[0][0] = %.17g, want %.17g", got["cholA"][0][0], want)
	}
}

func TestSDEOtherKinds(t *testing.T) {
	for _, args := range [][]string{
		{"--sde", "hold", "--order", "2", "--t", "1e-5"},
		{"--sde", "hold", "--order", "4", "--t", "7"},
		{"--sde", "hold", "--order", "4", "--astep", "0.5"},
		{"--sde", "cld", "--t", "0.5"},
		{"--sde", "cld", "--astep", "0.001"},
		{"--sde", "vp", "--t", "1e-3"},
		{"--sde", "vp", "--t", "0.5", "--astep", "0.01"},
		{"--sde", "ve", "--t", "1"},
	} {
		for _, asJSON := range []bool{true, false} {
			a := args
			if asJSON {
				a = append(append([]string(nil), args...), "--json")
			}
			out, code := runSDECommand(t, a...)
			if code != 0 || out == "" {
				t.Errorf("%v: exit %d, output %q", a, code, out)
				continue
			}
			if asJSON && !json.Valid([]byte(out)) {
				t.Errorf("%v: invalid JSON %q", a, out)
			}
		}
	}
	// CLD at t = 1: ℓ_t = 2.00001249 (CLD-SGM's kernel formulas evaluated exactly; docs/math.md#cld).
	out, _ := runSDECommand(t, "--sde", "cld", "--t", "1", "--json")
	var got struct {
		Ell float64 `json:"ell"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || !(math.Abs(got.Ell-2.00001249) <= 1e-8) {
		t.Errorf("CLD ell at t = 1: %v (err %v), want 2.00001249", got.Ell, err)
	}
}

func TestSDEBadParameters(t *testing.T) {
	for _, args := range [][]string{
		{"--sde", "hold", "--t", "8"},    // t > T = 7
		{"--sde", "hold", "--t", "1e-6"}, // t < t_min
		{"--sde", "hold", "--t", "0.5", "--L", "0"},
		{"--sde", "hold", "--t", "0.5", "--L", "-1"},
		{"--sde", "hold", "--t", "0.5", "--alpha", "-0.1"},
		{"--sde", "hold", "--t", "0.5", "--order", "5"},
		{"--sde", "hold", "--t", "0.5", "--order", "1"},
		{"--sde", "cld", "--t", "0.5", "--order", "3"},
		{"--sde", "vq", "--t", "0.5"},
		{"--sde", "ve", "--t", "2"},
		{"--sde", "hold", "--astep", "0"},
		{"--sde", "hold", "--astep", "-0.1"},
		{"--sde", "hold"}, // neither --t nor --astep
	} {
		out, code := runSDECommand(t, append(args, "--json")...)
		if code != exitBadParams {
			t.Errorf("%v: exit status %d, want %d", args, code, exitBadParams)
		}
		if out != "" {
			t.Errorf("%v: printed %q on stdout", args, out)
		}
	}
}

// TestFrozenBudgetFollowsMaxMemory: what frozen weights may keep is a quarter of --max-memory, at
// most 2 GiB.
func TestFrozenBudgetFollowsMaxMemory(t *testing.T) {
	prevFrozen, prevLimit := tensor.FrozenBudget.Load(), budget.Limit()
	defer func() { tensor.FrozenBudget.Store(prevFrozen); budget.SetLimit(prevLimit) }()
	for _, c := range []struct {
		flag string
		want int64
	}{{"64MiB", 16 << 20}, {"64GiB", 2 << 30}} {
		if _, code := runInProcess(t, "version", "--max-memory", c.flag); code != 0 {
			t.Fatalf("version --max-memory %s: exit %d", c.flag, code)
		}
		if got := tensor.FrozenBudget.Load(); got != c.want {
			t.Errorf("--max-memory %s: frozen budget %d, want %d", c.flag, got, c.want)
		}
	}
}
