// Package parallel is holdgo's one persistent worker pool. Large kernels split
// their index range into chunks with For; the chunks run on goroutines started
// once (no goroutine per call, none per element). Small ranges run inline.
//
// Idle workers park on a channel. (Spinning before parking was tried to cut
// Go's wake-up latency for the ~150 µs loops of a training step; on this
// shared 2-core machine it made two threads slower than one whenever another
// process was running, so it was taken out.)
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

type task struct {
	fn     func(lo, hi int)
	n      int
	chunk  int
	chunks int
	next   atomic.Int64
	done   sync.WaitGroup
}

// run takes chunks from t until none are left.
func (t *task) run() {
	for {
		c := int(t.next.Add(1)) - 1
		if c >= t.chunks {
			return
		}
		lo := c * t.chunk
		hi := min(lo+t.chunk, t.n)
		t.fn(lo, hi)
		t.done.Done()
	}
}

var (
	threads atomic.Int64
	mu      sync.Mutex // guards started
	started int
	work    = make(chan *task, 64)
)

func init() { threads.Store(int64(runtime.GOMAXPROCS(0))) }

// SetThreads sets how many goroutines (the caller included) run a parallel
// loop; n < 1 means GOMAXPROCS. It returns the previous value.
func SetThreads(n int) int {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	return int(threads.Swap(int64(n)))
}

// Threads reports the number of goroutines a parallel loop uses.
func Threads() int { return int(threads.Load()) }

// ensureWorkers starts the persistent workers up to k-1 (the caller is the k-th).
func ensureWorkers(k int) {
	mu.Lock()
	defer mu.Unlock()
	for started < k-1 {
		started++
		go worker()
	}
}

// worker runs the chunks of the loops it is handed.
func worker() {
	for t := range work {
		t.run()
	}
}

// For calls fn(lo, hi) on consecutive sub-ranges covering [0, n), each at
// least grain long (except the last), on up to Threads() goroutines, and
// returns when all calls have returned. fn must be safe to run concurrently on
// disjoint ranges. With one thread or n ≤ grain it runs fn(0, n) inline.
//
// Completion counts chunks, not workers, and the caller takes chunks too, so
// a loop never waits for a helper that is busy elsewhere (a For nested inside
// fn, or several callers at once, cannot deadlock).
func For(n, grain int, fn func(lo, hi int)) {
	if n <= 0 {
		return
	}
	grain = max(grain, 1)
	k := Threads()
	if k <= 1 || n <= grain {
		fn(0, n)
		return
	}
	// A few chunks per thread balance uneven work without much overhead.
	chunks := min((n+grain-1)/grain, 4*k)
	chunk := (n + chunks - 1) / chunks
	chunks = (n + chunk - 1) / chunk
	if chunks == 1 {
		fn(0, n)
		return
	}
	ensureWorkers(k)
	// A fresh task per call (one small allocation): a worker that dequeues
	// it late finds no chunks left, and nothing it reads is ever reused.
	t := &task{fn: fn, n: n, chunk: chunk, chunks: chunks}
	t.done.Add(chunks)
	for range min(k-1, chunks-1) {
		// Never block: with the queue full (every worker busy, for example
		// inside nested loops), the caller runs the remaining chunks itself.
		select {
		case work <- t:
		default:
		}
	}
	t.run()
	t.done.Wait()
}
