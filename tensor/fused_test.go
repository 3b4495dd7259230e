package tensor

import (
	"math"
	"slices"
	"testing"
)

// View aliases its parent's storage on every device, refuses to reach past it, and the step
// statistics' helpers read and clear what the fused ops write.
func TestViewAliases(t *testing.T) {
	for _, dev := range []Device{CPU, Reference, &fakeDevice{launches: map[OpKind]int{}}} {
		parent := New(dev, 10)
		v, err := View(parent, 3, 2, 2)
		if err != nil {
			t.Fatalf("%s: %v", dev.Name(), err)
		}
		if v.Device() != dev || !slices.Equal(v.Shape(), []int{2, 2}) {
			t.Fatalf("%s: view on %s of shape %v", dev.Name(), v.Device().Name(), v.Shape())
		}
		Fill(v, 1)
		h, err := parent.ToHost()
		if err != nil {
			t.Fatal(err)
		}
		if want := []float32{0, 0, 0, 1, 1, 1, 1, 0, 0, 0}; !slices.Equal(h.Data(), want) {
			t.Errorf("%s: parent after filling the view: %v, want %v", dev.Name(), h.Data(), want)
		}
		for _, bad := range [][2]int{{-1, 2}, {9, 2}, {0, 11}} {
			if _, err := View(parent, bad[0], bad[1]); err == nil {
				t.Errorf("%s: view of %d at %d in 10 accepted", dev.Name(), bad[1], bad[0])
			}
		}
	}
}

func TestStatsHelpers(t *testing.T) {
	for _, dev := range []Device{CPU, Reference} {
		host := make([]float32, StatsLen)
		PutFloat64s(host, []float64{0.25, 9, 3})
		stats, err := FromSlice(host, StatsLen).ToDevice(dev)
		if err != nil {
			t.Fatal(err)
		}
		loss, norm, skipped, err := ReadStats(stats)
		if err != nil || loss != 0.25 || norm != 3 || skipped != 3 {
			t.Fatalf("%s: ReadStats = %v, %v, %v, %v; want 0.25, 3, 3", dev.Name(), loss, norm, skipped, err)
		}
		if err := ClearSkipped(stats); err != nil {
			t.Fatal(err)
		}
		if _, _, skipped, _ := ReadStats(stats); skipped != 0 {
			t.Errorf("%s: %d skipped after ClearSkipped", dev.Name(), skipped)
		}
		SetStatsLoss(host, math.Inf(1))
		if StatsLoss(host) != math.Inf(1) || Float64At(host, 1) != 9 {
			t.Errorf("SetStatsLoss: %v, %v", StatsLoss(host), Float64At(host, 1))
		}
	}
}
