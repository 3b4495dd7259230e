package parallel

import (
	"sync/atomic"
	"time"
)

// The governor decides whether For may split a loop at all. Every parallel
// loop reports what it gained: an estimate of its serial time (the caller's
// own time per chunk times the number of chunks) minus its wall time. After
// window loops it looks at the sum: if splitting lost time, For runs loops
// inline for a back-off period, then tries again; each failed try doubles
// the period (up to backoffMax), a successful one resets it.
//
// Why: with another process busy on a core, the OS deschedules a worker in
// the middle of its chunk for a whole time slice (milliseconds), and the
// caller, done with its own chunks, waits for it. Measured before the
// governor on this 2-core VM with a CPU hog beside it: a toy training step
// took 3.07 ms on two threads against 2.03 ms on one. On a quiet machine a
// two-thread loop gains nearly half its serial time, every window's sum is
// positive and the governor never intervenes; its cost is two clock reads
// per parallel loop.
const (
	window     = 32
	backoffMin = int64(4 * time.Millisecond)
	backoffMax = int64(512 * time.Millisecond)
)

type governor struct {
	serialUntil atomic.Int64 // monotonic ns: before it, For runs inline
	gain        atomic.Int64 // ns gained by the current window's loops
	loops       atomic.Int64
	backoff     atomic.Int64 // next serial period, ns
}

var gov = newGovernor()

func newGovernor() *governor {
	g := &governor{}
	g.backoff.Store(backoffMin)
	return g
}

var epoch = time.Now()

// now is monotonic nanoseconds since the package started.
func now() int64 { return int64(time.Since(epoch)) }

// serial reports whether loops should run inline at time t.
func (g *governor) serial(t int64) bool { return t < g.serialUntil.Load() }

// observe records one parallel loop that ended at time t: serialEst is its
// estimated one-thread time, wall its measured time (both ns).
func (g *governor) observe(t, serialEst, wall int64) {
	g.gain.Add(serialEst - wall)
	if g.loops.Add(1)%window != 0 {
		return
	}
	gain := g.gain.Swap(0)
	b := g.backoff.Load()
	if gain >= 0 {
		g.backoff.Store(backoffMin)
		return
	}
	g.serialUntil.Store(t + b)
	g.backoff.Store(min(2*b, backoffMax))
}
