package peak

import (
	"math"
	"testing"
	"time"

	"holdgo/internal/isa"
)

// Every level this machine supports runs its loop: the check value is
// chains·iters (every chain did every iteration, checked against the count the
// plain-Go loop would give), and the FLOPs are iters times the loop's FLOPs per
// iteration.
func TestRunEveryLevel(t *testing.T) {
	for _, level := range isa.Levels() {
		chains, err := Chains(level)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		for _, iters := range []int{0, 1, 3, 17, 1000} {
			flops, check, err := Run(level, iters)
			if err != nil {
				t.Fatalf("%s: %v", level, err)
			}
			if want := float32(chains * iters); check != want {
				t.Errorf("%s, %d iterations: check %v, want %v", level, iters, check, want)
			}
			if want := float64(iters) * loops[levelIndex(t, level)].flopsPerIter; flops != want {
				t.Errorf("%s, %d iterations: %v FLOPs, want %v", level, iters, flops, want)
			}
		}
	}
}

func levelIndex(t *testing.T, level string) int {
	for i, l := range loops {
		if l.level == level {
			return i
		}
	}
	t.Fatalf("no loop for %s", level)
	return -1
}

// The FLOPs per iteration are those of the instructions: 2 per lane per FMA.
func TestFLOPsPerIteration(t *testing.T) {
	lanes := map[string]int{isa.AVX512: 16, isa.AVX2: 8, isa.Generic: 1}
	for _, l := range loops {
		if want := float64(l.chains * lanes[l.level] * 2); l.flopsPerIter != want {
			t.Errorf("%s: %v FLOPs per iteration, want %v", l.level, l.flopsPerIter, want)
		}
	}
}

// FMA returns a positive finite rate for every supported level, on one and
// two threads; an unknown level and zero threads are errors. No timed
// assertion: the machine may be shared.
func TestFMAMeasures(t *testing.T) {
	for _, level := range isa.Levels() {
		for _, threads := range []int{1, 2} {
			g, err := FMA(level, threads, 10*time.Millisecond)
			if err != nil {
				t.Fatalf("%s: %v", level, err)
			}
			if !(g > 0) || math.IsInf(g, 0) {
				t.Errorf("%s, %d threads: %v GFLOP/s", level, threads, g)
			}
			t.Logf("%s, %d threads: %.1f GFLOP/s", level, threads, g)
		}
	}
	if _, err := FMA("sse9", 1, time.Millisecond); err == nil {
		t.Error("an unknown level measured")
	}
	if _, err := FMA(isa.Generic, 0, time.Millisecond); err == nil {
		t.Error("0 threads measured")
	}
}
