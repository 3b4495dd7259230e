package experiment

import (
	"testing"

	"holdgo/hold"
	"holdgo/sample"
)

// TestSamplerNamesAgree: holdctl sample (sample.Spec), experiment samplers (StudyMethod) and
// experiment nfe (Table2Rows) take the registry's names with one meaning: the same method (its Name is
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
			kind, m, perStep, err := StudyMethod("hold-" + info.Name)
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
	for _, row := range Table2Rows {
		if _, err := sample.Lookup(row.Method); err != nil {
			t.Errorf("experiment nfe row %s-%s: %v", row.Model, row.Sampler, err)
		}
	}
	if _, err := (sample.Spec{Method: "nope", NFE: 10, Grid: sample.GridQuadratic, End: 1e-3}).Build(sde, orc, 1); err == nil {
		t.Error("unknown sampler accepted")
	}
}
