package tensor_test

import (
	"fmt"
	"math"
	"testing"

	"holdgo/internal/isa"
	"holdgo/internal/parallel"
	"holdgo/rng"
	"holdgo/tensor"
)

// TestGroupNormSiLUDropoutMatchesUnfusedCPU: on the CPU device the fused group norm + SiLU +
// dropout gives the bits of GroupNormSiLU followed by Dropout, forward, and its backward those of
// GroupNormSiLUBackward of Dropout(dy) (what the unfused tape computes), dγ and dβ included, at
// every ISA level and thread count, for odd sizes, mask offsets and both accumulate modes of dx: a
// CPU training run is what it was before the fusion. (The values themselves are checked against
// the Reference device by the backend table, tensor/optest.)
func TestGroupNormSiLUDropoutMatchesUnfusedCPU(t *testing.T) {
	st := rng.Stream{Key: 77, Step: 4, ID: rng.DropoutStream(2)}
	type gnCase struct {
		shape  []int
		groups int
	}
	for _, level := range isa.Levels() {
		prevISA, _ := isa.Set(level)
		for _, threads := range []int{1, 2} {
			prev := parallel.SetThreads(threads)
			for _, c := range []gnCase{{[]int{1, 1, 1}, 1}, {[]int{3, 6, 5, 7}, 3}, {[]int{2, 64, 9, 9}, 16}, {[]int{2, 8, 17}, 2}} {
				for _, dr := range []struct {
					p     float64
					first uint64
				}{{0.1, 0}, {0.5, 13}, {0.3, 1 << 33}} {
					for _, beta := range []float32{0, 0.5} {
						name := fmt.Sprintf("%s threads=%d %v/%d p=%g first=%d β=%g", level, threads, c.shape, c.groups, dr.p, dr.first, beta)
						checkGNDropBits(t, name, st, c.shape, c.groups, dr.p, dr.first, beta)
					}
				}
			}
			parallel.SetThreads(prev)
		}
		isa.Set(prevISA)
	}
}

func checkGNDropBits(t *testing.T, name string, st rng.Stream, shape []int, groups int, p float64, first uint64, beta float32) {
	t.Helper()
	r := rng.New(9)
	ch := shape[1]
	x := tensor.RandN(r, shape...)
	tensor.MulScalar(x, tensor.AddScalar(x, x, 3), 2)
	gamma, shift, dy := tensor.RandN(r, ch), tensor.RandN(r, ch), tensor.RandN(r, shape...)
	dx0, dg0, db0 := tensor.RandN(r, shape...), tensor.RandN(r, ch), tensor.RandN(r, ch)

	want := tensor.Dropout(nil, tensor.GroupNormSiLU(nil, x, gamma, shift, groups, 1e-6), st, p, first)
	got := tensor.GroupNormSiLUDropout(nil, x, gamma, shift, groups, 1e-6, st, p, first)
	sameBits(t, name+" forward", got.Data(), want.Data())

	grads := func() (dx, dg, db *tensor.Tensor) { return dx0.Clone(), dg0.Clone(), db0.Clone() }
	wdx, wdg, wdb := grads()
	tensor.GroupNormSiLUBackward(wdx, x, gamma, shift, tensor.Dropout(nil, dy, st, p, first), wdg, wdb, groups, 1e-6, beta)
	gdx, gdg, gdb := grads()
	tensor.GroupNormSiLUDropoutBackward(gdx, x, gamma, shift, dy, gdg, gdb, groups, 1e-6, beta, st, p, first)
	sameBits(t, name+" dx", gdx.Data(), wdx.Data())
	sameBits(t, name+" dγ", gdg.Data(), wdg.Data())
	sameBits(t, name+" dβ", gdb.Data(), wdb.Data())
}

func sameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
	}
	for i := range got {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Errorf("%s: element %d is %v, the unfused ops give %v", name, i, got[i], want[i])
			return
		}
	}
}
