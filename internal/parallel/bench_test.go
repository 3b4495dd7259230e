package parallel

import (
	"fmt"
	"testing"
)

// BenchmarkForSplit times a loop of fixed total work (about 55 µs on one
// core) split over the pool, to show the fork/join overhead at the size of a
// training step's small kernels.
func BenchmarkForSplit(b *testing.B) {
	data := make([]float32, 1<<16)
	work := func(lo, hi int) {
		for range 1 {
			for i := lo; i < hi; i++ {
				data[i] = data[i]*0.999 + 1
			}
		}
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			prev := SetThreads(threads)
			defer SetThreads(prev)
			for b.Loop() {
				For(len(data), 1024, work)
			}
		})
	}
}
