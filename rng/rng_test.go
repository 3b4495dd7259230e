package rng

import (
	"math"
	"slices"
	"testing"
)

func TestRNGIsSeededAndNormal(t *testing.T) {
	a, b := make([]float32, 1000), make([]float32, 1000)
	New(3).FillNormal(a, 0, 1)
	New(3).FillNormal(b, 0, 1)
	if !slices.Equal(a, b) {
		t.Fatal("same seed, different draws")
	}
	r := New(4)
	var s, s2 float64
	const n = 200000
	for range n {
		v := r.Normal()
		s += v
		s2 += v * v
	}
	if m, v := s/n, s2/n-(s/n)*(s/n); !(math.Abs(m) <= 4/math.Sqrt(n)) || !(math.Abs(v-1) <= 4*math.Sqrt(2.0/n)) {
		t.Fatalf("normal draws: mean %v, variance %v", m, v)
	}
	counts := make([]int, 3)
	for range 30000 {
		counts[r.IntN(3)]++
	}
	for i, c := range counts {
		if !(math.Abs(float64(c)-10000) <= 400) {
			t.Fatalf("IntN(3) bucket %d: %d of 30000", i, c)
		}
	}
}

func TestRNGStateRoundTrip(t *testing.T) {
	r := New(9)
	r.Normal() // leaves a spare normal pending
	state, err := r.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var s RNG
	if err := s.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if a, b := r.Normal(), s.Normal(); a != b {
			t.Fatalf("draw %d after restore: %v, want %v", i, b, a)
		}
	}
	if err := s.UnmarshalBinary(state[:5]); err == nil {
		t.Fatal("short state accepted")
	}
}
