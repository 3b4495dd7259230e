package isa

import "testing"

func TestSet(t *testing.T) {
	levels := Levels()
	if levels[len(levels)-1] != Generic {
		t.Fatalf("Levels() = %v, want generic last", levels)
	}
	t.Logf("levels %v, active %s", levels, Level())
	if _, err := Set("sse9"); err == nil || Supported("sse9") {
		t.Error(`Set("sse9") succeeded`)
	}
	for _, l := range levels {
		prev, err := Set(l)
		if err != nil || Level() != l || !Supported(l) {
			t.Fatalf("Set(%s) = %v, Level() = %s", l, err, Level())
		}
		Set(prev)
	}
}
