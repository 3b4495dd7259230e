package metrics

import (
	"math"
	"slices"
	"testing"

	"holdgo/tensor"
)

// TestSortFloats compares the radix sort with slices.Sort on awkward sets:
// sizes around the cut-over, values of both signs and many magnitudes,
// repeats, ±0, ±Inf, subnormals, keys that share all but their lowest byte.
func TestSortFloats(t *testing.T) {
	r := tensor.NewRNG(3)
	for _, n := range []int{0, 1, 2, 63, 64, 65, 257, 5000} {
		for kind := range 6 {
			x := make([]float64, n)
			for i := range x {
				switch kind {
				case 0: // normals
					x[i] = r.Normal()
				case 1: // magnitudes from 1e-300 to 1e300, both signs
					x[i] = math.Copysign(math.Pow(10, 600*r.Float64()-300), r.Normal())
				case 2: // few distinct values, ±0, infinities, subnormals
					x[i] = []float64{0, math.Copysign(0, -1), 1, -1, math.Inf(1), math.Inf(-1), 5e-324, -5e-324, 2.5}[i%9]
				case 3: // neighbours of 1: only the low bytes differ
					x[i] = math.Float64frombits(math.Float64bits(1) + uint64(r.Float64()*300))
				case 4: // one value
					x[i] = -3.25
				case 5: // one value, but the last one a step below: a byte that all keys but one share
					x[i] = math.Nextafter(1, 2)
					if i == n-1 {
						x[i] = 1
					}
				}
			}
			got, want := slices.Clone(x), slices.Clone(x)
			sortFloats(got, nil)
			slices.Sort(want)
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("n %d kind %d: [%d] = %v, want %v", n, kind, i, got[i], want[i])
				}
			}
		}
	}
}

func BenchmarkSortFloats(b *testing.B) {
	r := tensor.NewRNG(1)
	src := make([]float64, 5000)
	for i := range src {
		src[i] = r.Normal()
	}
	x := make([]float64, len(src))
	scratch := make([]uint64, 2*len(src))
	b.Run("radix", func(b *testing.B) {
		for b.Loop() {
			copy(x, src)
			sortFloats(x, scratch)
		}
	})
	b.Run("slices.Sort", func(b *testing.B) {
		for b.Loop() {
			copy(x, src)
			slices.Sort(x)
		}
	})
}
