package sample

import (
	"math"
	"testing"
)

// TestConvergedRows: rows with a NaN, an infinity or a value beyond
// DivergedBound are dropped and counted.
func TestConvergedRows(t *testing.T) {
	inf := float32(math.Inf(1))
	nan := float32(math.NaN())
	got, dropped := ConvergedRows([]float32{1, 2, nan, 3, 4, 5, 6, -inf, 7, 8, 6e9, 0, -1e5, 2}, 2)
	if dropped != 3 || len(got) != 8 || got[0] != 1 || got[2] != 4 || got[4] != 7 || got[6] != -1e5 {
		t.Fatalf("ConvergedRows: %v, dropped %d", got, dropped)
	}
}
