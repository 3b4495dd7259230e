package main

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"holdgo/restore"
)

// studyJSON is the part of experiment restore --format json the tests read.
type studyJSON struct {
	Cells []struct {
		Task   string        `json:"task"`
		SigmaY float64       `json:"sigma_y"`
		Method string        `json:"method"`
		NFE    int           `json:"nfe"`
		Model  string        `json:"model"`
		PSNR   restore.Stat  `json:"psnr"`
		SSIM   restore.Stat  `json:"ssim"`
		KID    *restore.Stat `json:"kid"`
		Agree  *restore.Stat `json:"class_agreement"`
	} `json:"cells"`
	Pairs []restore.PairCell `json:"pairs"`
}

// TestExperimentRestore runs a small study of the shipped HOLD-3 model under two names: the paired
// differences of a model against itself are exactly zero (the same images, masks, measurements and
// method noise for every model), each cell is what holdctl restore reports for the same settings
// (one code path), and the baselines order as they must (LMMSE above mean fill).
func TestExperimentRestore(t *testing.T) {
	args := []string{"experiment", "restore", "--model", "a=" + restoreModel, "--model", "b=" + restoreModel, "--in", restoreImages,
		"--n", "3", "--nfe", "4", "--tasks", "inpaint-box,denoise:0.2", "--methods", "ddnm,none", "--prior", restoreImages,
		"--features", "../../models/fmnist-classifier.safetensors", "--kid-ref", restoreImages, "--threads", "1", "--format", "json"}
	r := mustRun(t, args...)
	var st studyJSON
	if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	got := map[string]float64{}
	for _, c := range st.Cells {
		got[c.Task+"|"+c.Method+"|"+c.Model] = c.PSNR.Mean
		if c.Model != "baseline" && (c.KID == nil || c.Agree == nil) {
			t.Errorf("cell %s %s %s: no KID or class agreement with --features", c.Task, c.Method, c.Model)
		}
	}
	// ddnm on both tasks, none on denoise only, for a and b; three baselines per task.
	if len(st.Cells) != 3*2+2*2+2 {
		t.Errorf("%d cells, want 12: %+v", len(st.Cells), st.Cells)
	}
	if !(got["inpaint-box|LMMSE|baseline"] > got["inpaint-box|mean fill|baseline"]+2) {
		t.Errorf("inpaint-box: LMMSE PSNR %.2f not above mean fill %.2f", got["inpaint-box|LMMSE|baseline"], got["inpaint-box|mean fill|baseline"])
	}
	if len(st.Pairs) != 3 {
		t.Errorf("%d pairs, want 3 (a − b for each cell)", len(st.Pairs))
	}
	for _, p := range st.Pairs {
		if p.PSNR.Mean != 0 || p.SSIM.Mean != 0 || p.PSNR.N != 3 {
			t.Errorf("%s %s: a − b of one model is PSNR %v, SSIM %v over %d images, want exactly 0 over 3", p.Task, p.Method, p.PSNR.Mean, p.SSIM.Mean, p.PSNR.N)
		}
	}
	one := runRestoreJSON(t, "--task", "inpaint-box", "--method", "ddnm", "--nfe", "4", "--n", "3", "--out", t.TempDir()+"/r.npy")
	if d := math.Abs(one.PSNR - got["inpaint-box|ddnm|a"]); !(d <= 1e-12) {
		t.Errorf("experiment restore's inpaint-box ddnm cell has PSNR %.15f, holdctl restore %.15f", got["inpaint-box|ddnm|a"], one.PSNR)
	}
	md := mustRun(t, append(args[:len(args)-2], "--format", "markdown")...)
	for _, want := range []string{"| inpaint-box | 0 | ddnm | 4 | a |", "| inpaint-box | 0 | LMMSE | — | baseline |", "a − b", "Skipped:", "none is denoise's exact start"} {
		if !strings.Contains(md.stdout, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.stdout)
		}
	}
}

// TestExperimentRestoreBadInput: every bad value exits 2 with one line, before any restoration.
func TestExperimentRestoreBadInput(t *testing.T) {
	base := []string{"experiment", "restore", "--in", restoreImages, "--n", "2", "--nfe", "3", "--threads", "1"}
	m := "a=" + restoreModel
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", restoreModel}, "NAME=DIR"},
		{[]string{"--model", m, "--model", m}, "given twice"},
		{[]string{"--model", m, "--pair", "a:c"}, "--pair"},
		{[]string{"--model", m, "--tasks", "denoise:nan"}, "σ_y"},
		{[]string{"--model", m, "--tasks", "denoise:-1"}, "σ_y"},
		{[]string{"--model", m, "--nfe", "1"}, "--nfe 1"},
		{[]string{"--model", m, "--format", "csv"}, "--format"},
		{[]string{"--model", m, "--eta", "2"}, "--eta"},
		{[]string{"--model", m, "--tasks", "sr3"}, "unknown task"},
		{[]string{"--model", m, "--methods", "exact"}, "--methods"},
		{[]string{"--model", m, "--tasks", "sr4", "--methods", "replace"}, "no cell could run"},
		{[]string{"--model", m, "--prior", "fashion-mnist:/nonexistent"}, "--prior"},
		{[]string{"--model", "a=/nonexistent"}, "--model"},
		{[]string{"--model", m, "stray"}, "no arguments"},
	} {
		r := holdctl(t, append(append([]string(nil), base...), c.args...)...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line naming %q", c.args, r.code, r.stderr, c.want)
		}
	}
}
