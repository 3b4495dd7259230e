package main

import (
	"os"
	"strings"
	"testing"
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
	if !strings.HasPrefix(out, "sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev,error,path_err\n") || !strings.Contains(out, "hold-lt,quadratic,30,29,") ||
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
