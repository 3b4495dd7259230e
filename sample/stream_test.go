package sample

import (
	"errors"
	"slices"
	"testing"

	"holdgo/hold"
)

// TestEachMatchesSample: the streamed chunks, concatenated, are exactly
// Sample's states (uneven last chunk, several workers for Sample), with the
// same NFE and diverged count; an emit error stops the run.
func TestEachMatchesSample(t *testing.T) {
	sde := newSDE(t, hold.KindHOLD)
	orc, _ := hold.NewMixtureOracle(sde, hold.PaperMixture())
	grid := mustGrid(t, GridQuadratic, sde.Horizon(), 1e-3, 12)
	s := &Sampler{SDE: sde, Score: orc, Method: LieTrotter{}, Grid: grid, Dim: 1, MaxBatch: 8, Workers: 3}
	want, err := s.Sample(29, 7)
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	var firsts []int
	res, err := s.Each(29, 7, func(first int, x []float64) error {
		firsts = append(firsts, first)
		got = append(got, x...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want.X) {
		t.Error("Each's states differ from Sample's")
	}
	if !slices.Equal(firsts, []int{0, 8, 16, 24}) || res.NFE != want.NFE || res.Diverged != want.Diverged {
		t.Errorf("firsts %v, NFE %d (want %d), diverged %d (want %d)", firsts, res.NFE, want.NFE, res.Diverged, want.Diverged)
	}
	stop := errors.New("disk full")
	calls := 0
	if _, err := s.Each(29, 7, func(int, []float64) error { calls++; return stop }); !errors.Is(err, stop) || calls != 1 {
		t.Errorf("emit error: %v after %d calls", err, calls)
	}
}
