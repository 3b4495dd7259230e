package parallel

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
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
		for range 1000 * (hi - lo) {
			For(4, 1, func(lo, hi int) { total.Add(int64(hi - lo)) })
		}
	})
	if total.Load() != 2*1000*4 {
		t.Fatalf("nested total %d, want %d", total.Load(), 2*1000*4)
	}
}

func TestGovernorBacksOffAndRecovers(t *testing.T) {
	g := newGovernor()
	ms := int64(time.Millisecond)
	at := int64(1000 * ms)
	// A window whose loops each lost 1 ms: serial for backoffMin.
	for range window {
		g.observe(at, 1*ms, 2*ms, -1)
	}
	if !g.serial(at) || !g.serial(at+backoffMin-1) || g.serial(at+backoffMin) {
		t.Fatalf("after a losing window: serial until %d, want %d", g.serialUntil.Load(), at+backoffMin)
	}
	// The next try loses again: the period doubles.
	at += backoffMin
	for range window {
		g.observe(at, 1*ms, 2*ms, -1)
	}
	if !g.serial(at+2*backoffMin-1) || g.serial(at+2*backoffMin) {
		t.Fatalf("after two losing windows: serial until %d, want %d", g.serialUntil.Load(), at+2*backoffMin)
	}
	// Many more: capped at backoffMax.
	for range 20 {
		for range window {
			g.observe(at, 1*ms, 2*ms, -1)
		}
	}
	if g.backoff.Load() != backoffMax {
		t.Fatalf("backoff %d after many losses, want the cap %d", g.backoff.Load(), backoffMax)
	}
	// A window that gained resets the period; one lossy loop among gains
	// does not stop splitting.
	at += 10 * backoffMax
	for i := range window {
		if i == 3 {
			g.observe(at, 1*ms, 3*ms, -1)
		} else {
			g.observe(at, 2*ms, 1*ms, -1)
		}
	}
	if g.serial(at) || g.backoff.Load() != backoffMin {
		t.Fatalf("after a gaining window: serial=%v backoff=%d, want false and %d", g.serial(at), g.backoff.Load(), backoffMin)
	}
}

// TestGovernorIgnoresShortLoopsGain: a window of short loops (serial estimate below minGainLoop) that each
// lost a little to the hand-offs leaves splitting on; the same window with its caller's thread at half
// the wall time as CPU (a busy core) turns it off, and a window of long losing loops does too.
func TestGovernorIgnoresShortLoopsGain(t *testing.T) {
	us := int64(time.Microsecond)
	short := minGainLoop / 4
	g := newGovernor()
	for range window {
		g.observe(0, short, short+10*us, short+10*us)
	}
	if g.serial(0) {
		t.Fatal("a window of short losing loops, uncontended: serial, want split")
	}
	for range window {
		g.observe(0, short, short+10*us, (short+10*us)/2)
	}
	if !g.serial(0) {
		t.Fatal("a window of short loops with the caller at half its wall time as CPU: split, want serial")
	}
	g = newGovernor()
	for range window {
		g.observe(0, minGainLoop, minGainLoop+10*us, minGainLoop+10*us)
	}
	if !g.serial(0) {
		t.Fatal("a window of losing loops of minGainLoop each: split, want serial")
	}
}

// TestForStopsSplittingWhenWorkersStall makes every chunk a worker runs take
// 2 ms (a worker descheduled by the OS mid-chunk, as under a CPU hog) while
// the caller's chunks are instant: within a few windows For must run every
// chunk on the caller.
func TestForStopsSplittingWhenWorkersStall(t *testing.T) {
	prev := SetThreads(2)
	defer SetThreads(prev)
	saved := gov
	gov = newGovernor()
	defer func() { gov = saved }()
	caller := goroutineID()
	split := func() bool {
		var elsewhere atomic.Int64
		For(64, 1, func(lo, hi int) {
			if goroutineID() != caller {
				elsewhere.Add(1)
				time.Sleep(2 * time.Millisecond)
			}
		})
		return elsewhere.Load() > 0
	}
	for range 4 * window {
		if !split() {
			return
		}
	}
	t.Fatalf("For still splits loops after %d loops whose worker chunks stalled", 4*window)
}

// goroutineID parses the running goroutine's number from its stack header.
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := strings.Fields(string(buf))
	return f[1]
}

// TestGovernorContendedCaller: loops that gain by the time estimate still
// stop being split when the caller's thread got under 80 % of the wall time
// as CPU time (another process shares its core), and not at 85 %.
func TestGovernorContendedCaller(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, c := range []struct {
		cpu    int64
		serial bool
	}{{75 * ms / 100, true}, {85 * ms / 100, false}, {-1, false}} {
		g := newGovernor()
		for range window {
			g.observe(0, 2*ms, 1*ms, c.cpu)
		}
		if g.serial(0) != c.serial {
			t.Errorf("caller CPU %d ns per 1 ms loop: serial=%v, want %v", c.cpu, g.serial(0), c.serial)
		}
	}
}
