package main

import (
	"strings"
	"testing"
)

func runSamplersCommand(t *testing.T, args ...string) (string, int) {
	t.Helper()
	return runInProcess(t, append([]string{"experiment", "samplers"}, args...)...)
}

func TestExperimentSamplers(t *testing.T) {
	out, code := runSamplersCommand(t, "--nfe", "20,30", "--grids", "quadratic", "--samplers", "hold-lt,cld-sscs",
		"--samples", "300", "--floor-reps", "2", "--format", "csv")
	if code != 0 {
		t.Fatalf("exit status %d", code)
	}
	if !strings.HasPrefix(out, "sampler,grid,nfe,steps,tol,w1,width_ratio\n") || !strings.Contains(out, "hold-lt,quadratic,30,29,") ||
		!strings.Contains(out, "cld-sscs,quadratic,20,19,") || !strings.Contains(out, "floor-mean,exact") {
		t.Errorf("CSV output:\n%s", out)
	}
	out, code = runSamplersCommand(t, "--nfe", "20", "--grids", "geometric", "--samplers", "vp-em", "--samples", "200",
		"--floor-reps", "1", "--end-time", "vp=1e-3")
	if code != 0 || !strings.Contains(out, "Grid: geometric") || !strings.Contains(out, "| vp-em |") {
		t.Errorf("exit %d, markdown output:\n%s", code, out)
	}
	for _, bad := range [][]string{
		{"--format", "json"}, {"--samplers", "hold-nope"}, {"--grids", "cubic"}, {"--nfe", "1"}, {"--end-time", "vp"},
	} {
		if _, code := runSamplersCommand(t, append(bad, "--samples", "100", "--nfe", "20")...); code != exitBadParams {
			t.Errorf("%v: exit status %d, want %d", bad, code, exitBadParams)
		}
	}
}
