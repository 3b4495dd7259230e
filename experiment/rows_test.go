package experiment

import (
	"slices"
	"testing"
)

// TestSamplerRowsOrders: the one table gives experiment nfe its rows in the paper's order (HOLD-LT
// first: the verdict compares against row 0) and experiment samplers its default samplers grouped by
// kind, as the two tables it replaced did.
func TestSamplerRowsOrders(t *testing.T) {
	var got []string
	for _, r := range Table2Rows {
		got = append(got, r.Model+" "+r.Sampler+" "+r.Name())
	}
	want := []string{"HOLD LT hold-lt", "HOLD EM hold-em", "CLD SSCS cld-lt", "VP EM vp-em", "VE PC ve-pc",
		"HOLD x̂₀-DDIM hold-xddim", "HOLD x̂₀-DPM 2M hold-xdpm2", "HOLD x̂₀-DPM 3M hold-xdpm3", "CLD gDDIM-style x̂₀ 2M cld-xdpm2",
		"VP DDIM vp-xddim", "VP DPM-Solver++ 2M vp-xdpm2", "VP DPM-Solver++ 3M vp-xdpm3"}
	if !slices.Equal(got, want) {
		t.Errorf("Table2Rows:\n%q\nwant\n%q", got, want)
	}
	wantStudy := []string{"hold-lt", "hold-em", "hold-xddim", "hold-xdpm2", "hold-xdpm3",
		"cld-lt", "cld-em", "cld-xdpm2", "vp-em", "vp-xddim", "vp-xdpm2", "vp-xdpm3"}
	if !slices.Equal(DefaultStudySamplers, wantStudy) {
		t.Errorf("DefaultStudySamplers %q, want %q", DefaultStudySamplers, wantStudy)
	}
	for _, r := range SamplerRows {
		if _, _, _, err := StudyMethod(r.Name()); err != nil {
			t.Errorf("%s: %v", r.Name(), err)
		}
	}
}
