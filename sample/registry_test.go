package sample

import (
	"strings"
	"testing"

	"holdgo/hold"
)

// TestRegistryProperties: every registry entry's stated properties agree with the method it builds —
// Readout with the read-out interface, Grid and Flow with the method's kind, Device with OnDevice —
// so that a new entry cannot state what its method does not do.
func TestRegistryProperties(t *testing.T) {
	for _, info := range Registry {
		m := info.build(Options{})
		_, readout := m.(readouter)
		grid, flow := GridQuadratic, ""
		switch v := m.(type) {
		case Aligned:
			grid = GridVPMatched
			if v.Solver == AlignedHeun {
				grid = GridEDM
			}
			if v.Solver != AlignedAnc && v.Solver != AlignedSDE2 {
				flow = "a-ode"
			}
		case Heun, RK4, DormandPrince:
			flow = "ode"
		}
		device := (&Sampler{Method: m}).OnDevice() == nil
		if info.Readout != readout || info.Grid != grid || info.Flow != flow || info.Device != device {
			t.Errorf("%s: states readout %v, grid %s, flow %q, device %v; its method has %v, %s, %q, %v",
				info.Name, info.Readout, info.Grid, info.Flow, info.Device, readout, grid, flow, device)
		}
		if HasReadout(info.Name) != info.Readout || PreferredGrid(info.Name) != info.Grid || ConvergedFlow(info.Name) != info.Flow {
			t.Errorf("%s: the lookups disagree with the entry", info.Name)
		}
	}
	if HasReadout("nope") || PreferredGrid("nope") != GridQuadratic || ConvergedFlow("nope") != "" {
		t.Error("an unknown name has properties")
	}
}

// TestHostReason: sampling on a device says why the state stays on the host — a sampler without a
// device implementation, --clip's wrapped score, a denoising run — and nothing for lt and em with
// the model's own score.
func TestHostReason(t *testing.T) {
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	oracle, err := hold.NewMixtureOracle(sde, hold.PaperMixture())
	if err != nil {
		t.Fatal(err)
	}
	clipped, err := NewClippedScorer(sde, oracle, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		method  string
		score   hold.Scorer
		denoise bool
		want    string
	}{
		{"lt", oracle, false, ""},
		{"em", oracle, false, ""},
		{"a-sde2", oracle, false, "a-sde2 has no device implementation"},
		{"lt-mid", oracle, false, "no device implementation"},
		{"lt", clipped, false, "--clip thresholds"},
		{"em", oracle, true, "does not denoise"},
	} {
		m, _, err := NewMethod(c.method, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := &Sampler{SDE: sde, Score: c.score, Method: m, Denoise: c.denoise}
		got := s.HostReason(oracle)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("%s (denoise %v, clipped %v): reason %q, want %q", c.method, c.denoise, c.score != hold.Scorer(oracle), got, c.want)
		}
	}
}
