package parallel

import (
	"sync/atomic"
	"testing"
)

func TestForCoversRangeOnce(t *testing.T) {
	for _, threads := range []int{1, 2, 3, 8} {
		prev := SetThreads(threads)
		for _, n := range []int{0, 1, 2, 7, 100, 1001} {
			for _, grain := range []int{0, 1, 3, 64, 5000} {
				hits := make([]int32, n)
				var shortest, longest atomic.Int64
				shortest.Store(int64(n + 1))
				For(n, grain, func(lo, hi int) {
					for i := lo; i < hi; i++ {
						atomic.AddInt32(&hits[i], 1)
					}
					for l := int64(hi - lo); ; {
						s := shortest.Load()
						if l >= s || shortest.CompareAndSwap(s, l) {
							break
						}
					}
					for l := int64(hi - lo); ; {
						m := longest.Load()
						if l <= m || longest.CompareAndSwap(m, l) {
							break
						}
					}
				})
				if n > 0 && (shortest.Load() < int64(min(max(grain, 1), n)) || longest.Load()-shortest.Load() > 1 && shortest.Load() != int64(n)) {
					t.Fatalf("threads=%d n=%d grain=%d: chunks of %d…%d elements, want ≥ grain and even", threads, n, grain, shortest.Load(), longest.Load())
				}
				for i, h := range hits {
					if h != 1 {
						t.Fatalf("threads=%d n=%d grain=%d: index %d visited %d times", threads, n, grain, i, h)
					}
				}
			}
		}
		SetThreads(prev)
	}
}

func TestNestedForDoesNotDeadlock(t *testing.T) {
	prev := SetThreads(2)
	defer SetThreads(prev)
	var total atomic.Int64
	For(8, 1, func(lo, hi int) {
		for range hi - lo {
			For(100, 10, func(lo, hi int) { total.Add(int64(hi - lo)) })
		}
	})
	if total.Load() != 800 {
		t.Fatalf("nested total %d, want 800", total.Load())
	}
}

// TestManyNestedForsWhileWorkersBusy nests far more loops than the work
// queue holds while every worker is busy: the queue fills with tasks nobody
// can take, and For must run the chunks itself instead of blocking.
func TestManyNestedForsWhileWorkersBusy(t *testing.T) {
	prev := SetThreads(2)
	defer SetThreads(prev)
	var total atomic.Int64
	For(2, 1, func(lo, hi int) {
		for range 1000 {
			For(4, 1, func(lo, hi int) { total.Add(int64(hi - lo)) })
		}
	})
	if total.Load() != 2*1000*4 {
		t.Fatalf("nested total %d, want %d", total.Load(), 2*1000*4)
	}
}
