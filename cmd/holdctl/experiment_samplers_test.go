package main

import (
	"os"
	"strings"
	"testing"

	"holdgo/experiment"
	"holdgo/hold"
	"holdgo/sample"
)

func runSamplersCommand(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runInProcess(t, append([]string{"experiment", "samplers"}, args...)...)
}

func TestExperimentSamplers(t *testing.T) {
	out, code := runSamplersCommand(t, "--nfe", "20,30", "--grids", "quadratic", "--samplers", "hold-lt,cld-lt,hold-xdpm2",
		"--samples", "300", "--floor-reps", "2", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	if !strings.HasPrefix(out, "sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev,error\n") || !strings.Contains(out, "hold-lt,quadratic,30,29,") ||
		!strings.Contains(out, "cld-lt,quadratic,20,19,") || !strings.Contains(out, "hold-xdpm2,quadratic,20,19,") || !strings.Contains(out, "floor-mean,exact") {
		t.Errorf("CSV output:\n%s", out)
	}
	out, code = runSamplersCommand(t, "--nfe", "20", "--grids", "geometric", "--samplers", "vp-em", "--samples", "200",
		"--floor-reps", "1", "--end-time", "vp=1e-3")
	if code != 0 || !strings.Contains(out, "Grid: geometric") || !strings.Contains(out, "| vp-em |") {
		t.Errorf("exit %d, markdown output:\n%s", code, out)
	}
	// A failing sampler (VP ending after its horizon: no grid) is an error row; the study goes on and
	// exits 0, and the CSV still feeds plot nfe. Exit 1 only when every run failed.
	dir := t.TempDir()
	csvPath := dir + "/study.csv"
	_, code = runSamplersCommand(t, "--nfe", "10,20", "--grids", "quadratic", "--samplers", "vp-em,hold-xanc", "--samples", "200",
		"--floor-reps", "1", "--end-time", "vp=5", "--format", "csv", "--out", csvPath)
	body, err := os.ReadFile(csvPath)
	if code != 0 || err != nil || !strings.Contains(string(body), "vp-em,quadratic,10,9,0,NaN,NaN,NaN,NaN,\"experiment: study vp-em") ||
		!strings.Contains(string(body), "hold-xanc,quadratic,20,19,0,0.") {
		t.Errorf("one failing sampler: exit %d (%v), CSV:\n%s", code, err, body)
	}
	if _, code := runInProcess(t, "plot", "nfe", "--csv", csvPath, "--out", dir+"/nfe.png"); code != 0 {
		t.Errorf("plot nfe of a study with error rows: exit %d", code)
	}
	out, code = runSamplersCommand(t, "--nfe", "10", "--grids", "quadratic", "--samplers", "vp-em", "--samples", "100",
		"--floor-reps", "1", "--end-time", "vp=5")
	if code != 1 || !strings.Contains(out, "| vp-em | error |") {
		t.Errorf("every run failing: exit %d, want 1; output:\n%s", code, out)
	}
	for _, bad := range [][]string{
		{"--format", "json"}, {"--samplers", "hold-nope"}, {"--grids", "cubic"}, {"--nfe", "1"}, {"--end-time", "vp"},
		{"--data", "fashion-mnist:/nonexistent"}, {"--data", "nope:x"}, {"--sigma-min", "0"}, {"--sigma-min", "NaN"},
	} {
		if _, code := runSamplersCommand(t, append(bad, "--samples", "100", "--nfe", "20")...); code != exitBadParams {
			t.Errorf("%v: exit status %d, want %d", bad, code, exitBadParams)
		}
	}
}

// TestSamplerNamesAgree: holdctl sample (samplerSpec), experiment samplers (experiment.StudyMethod) and
// experiment nfe (experiment.Table2Rows) take the registry's names with one meaning: the same method (its Name is
// the registry name) and the same steps for an NFE budget.
func TestSamplerNamesAgree(t *testing.T) {
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	orc, _ := hold.NewMixtureOracle(sde, hold.PaperMixture())
	for _, info := range sample.Registry {
		for _, denoise := range []bool{false, true} {
			spec := sample.Spec{Method: info.Name, NFE: 21, Grid: sample.GridQuadratic, End: 1e-3, Denoise: denoise, Tol: 1e-3}
			s, err := spec.Build(sde, orc, 1)
			if err != nil {
				t.Fatalf("holdctl sample --sampler %s: %v", info.Name, err)
			}
			kind, m, perStep, err := experiment.StudyMethod("hold-" + info.Name)
			if err != nil || kind != hold.KindHOLD {
				t.Fatalf("experiment samplers hold-%s: %v", info.Name, err)
			}
			if s.Method.Name() != info.Name || m.Name() != info.Name || perStep != info.PerStep {
				t.Errorf("%s: sample builds %s, experiment samplers %s (%d per step, registry %d)", info.Name, s.Method.Name(), m.Name(), perStep, info.PerStep)
			}
			want := 1
			if perStep > 0 {
				extra := map[bool]int{true: 1, false: 0}[denoise]
				want = (21 - extra) / perStep
			}
			if steps := len(s.Grid) - 1; steps != want {
				t.Errorf("%s denoise=%v: %d steps for NFE 21, want %d", info.Name, denoise, steps, want)
			}
		}
	}
	for _, row := range experiment.Table2Rows {
		if _, err := sample.Lookup(row.Method); err != nil {
			t.Errorf("experiment nfe row %s-%s: %v", row.Model, row.Sampler, err)
		}
	}
	if _, err := (sample.Spec{Method: "nope", NFE: 10, Grid: sample.GridQuadratic, End: 1e-3}).Build(sde, orc, 1); err == nil {
		t.Error("unknown sampler accepted")
	}
}
