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
// caller, done with its own chunks, waits for it; the caller's own chunks
// run on a shared core too. So a window also counts as lost when the
// caller's thread got less than 80 % of the window's wall time as CPU time
// (Linux's per-thread CPU clock; elsewhere the time estimate alone decides).
// Measured on this 2-core VM, toy training step (holdctl bench mlp, median
// of 10 runs each, old and new binaries alternating, 2026-11-25): with a
// CPU hog beside it, 2 threads took 4.55 ms against 3.55 ms on one (1.28×)
// before the governor and 3.81 against 3.64 ms (1.05×) with it; on the
// machine without the hog, 2 threads took 3.11 ms before and 2.94 ms after.
// On a quiet machine a two-thread loop gains nearly half its serial time,
// the caller's thread has its core, and the governor never intervenes; its
// cost is two clock reads and two thread-CPU-clock reads per parallel loop
// and one clock read per chunk its caller runs.
//
// Only loops of at least minGainLoop of estimated serial time count towards
// the gain: a window of short loops (a network's bias adds, group-norm rows
// and attention pieces, 30–60 µs each) loses a few per cent to the hand-offs
// (measured in an ncsnpp-cifar10 forward on two threads: windows of 1–2 ms
// that lost 0.12–0.5 ms), and counting them sent every following loop, the
// convolutions' GEMMs included, inline for 4 ms; 450 times in one
// five-repeat benchmark, the forward pass 5 % slower than without the
// governor. Their wall and CPU time still count, so a busy core is still seen.
const (
	// minGainLoop is the shortest loop (estimated serial time, ns) whose gain counts.
	minGainLoop = int64(200 * time.Microsecond)
	window      = 32
	backoffMin  = int64(4 * time.Millisecond)
	backoffMax  = int64(512 * time.Millisecond)
)

type governor struct {
	serialUntil atomic.Int64 // monotonic ns: before it, For runs inline
	gain        atomic.Int64 // ns gained by the current window's loops
	wall, cpu   atomic.Int64 // the window's loops: wall time and the caller thread's CPU time (ns; cpu < 0: unknown)
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
// estimated one-thread time, wall its measured time and cpu the CPU time
// its caller's thread got meanwhile (all ns; cpu < 0 when unknown).
func (g *governor) observe(t, serialEst, wall, cpu int64) {
	if serialEst >= minGainLoop {
		g.gain.Add(serialEst - wall)
	}
	g.wall.Add(wall)
	if cpu < 0 {
		g.cpu.Store(-1 << 62)
	} else {
		g.cpu.Add(cpu)
	}
	if g.loops.Add(1)%window != 0 {
		return
	}
	gain, w, c := g.gain.Swap(0), g.wall.Swap(0), g.cpu.Swap(0)
	b := g.backoff.Load()
	// The caller's thread got less than 80 % of the window's wall time:
	// another process takes the cores (a thread that waits for a worker
	// spins first, so waiting alone does not lower it much). Split loops
	// then lose more than the caller's chunk times show, since the caller's
	// own chunks ran on a shared core; a loop run inline has a core to itself.
	contended := c >= 0 && c*5 < w*4
	if gain >= 0 && !contended {
		g.backoff.Store(backoffMin)
		return
	}
	g.serialUntil.Store(t + b)
	g.backoff.Store(min(2*b, backoffMax))
}
