package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlotNFEBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.csv", "sampler,grid,nfe,w1\nhold-lt,quadratic,20,0.06\n")
	for name, args := range map[string][]string{
		"no --csv":     {},
		"missing file": {"--csv", filepath.Join(dir, "nope.csv")},
		"empty file":   {"--csv", write("empty.csv", "")},
		"no w1 column": {"--csv", write("nocol.csv", "sampler,grid,nfe,kl\nhold-lt,quadratic,20,0.06\n")},
		"bad value":    {"--csv", write("badval.csv", "sampler,grid,nfe,w1\nhold-lt,quadratic,20,abc\n")},
		"bad nfe":      {"--csv", write("badnfe.csv", "sampler,grid,nfe,w1\nhold-lt,quadratic,-3,0.1\n")},
		"unknown grid": {"--csv", good, "--grid", "nosuch"},
		"not positive": {"--csv", write("zero.csv", "sampler,grid,nfe,w1\nhold-lt,quadratic,20,0\n")},
		"bad out dir":  {"--csv", good, "--out", filepath.Join(dir, "no", "such", "dir", "x.png")},
	} {
		out, err := runSub(t, plotCommand(), append([]string{"nfe"}, args...)...)
		if err == nil || !strings.Contains(err.Error(), "holdctl") {
			t.Errorf("%s: %v\n%s; want a usage error", name, err, out)
		}
	}
	out := filepath.Join(dir, "nfe.png")
	if msg, err := runSub(t, plotCommand(), "nfe", "--csv", good, "--out", out); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	if st, err := os.Stat(out); err != nil || st.Size() == 0 {
		t.Errorf("no picture: %v", err)
	}
}
