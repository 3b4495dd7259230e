package train

import (
	"fmt"
	"testing"

	"holdgo/internal/parallel"
)

// BenchmarkMLPTrainStep is one training step of the toy score network at
// batch 512 on one and two threads, with allocations per step; tensor
// memory comes from the tape's pool once warm.
func BenchmarkMLPTrainStep(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			defer parallel.SetThreads(parallel.SetThreads(threads))
			step, flops, err := ToyStep(512, 128, 1)
			if err != nil {
				b.Fatal(err)
			}
			step()
			b.ReportAllocs()
			for b.Loop() {
				step()
			}
			b.ReportMetric(512*flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/step")
		})
	}
}
