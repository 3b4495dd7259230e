// Package parallel is holdgo's one persistent worker pool. Large kernels split
// their index range into chunks with For; the chunks run on goroutines started
// once (no goroutine per call, none per element). Small ranges run inline.
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
	next   atomic.Int64
	done   sync.WaitGroup
	chunks int
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
	mu      sync.Mutex
	threads = runtime.GOMAXPROCS(0)
	started int
	work    = make(chan *task, 64)
)

// SetThreads sets how many goroutines (the caller included) run a parallel
// loop; n < 1 means GOMAXPROCS. It returns the previous value.
func SetThreads(n int) int {
	mu.Lock()
	defer mu.Unlock()
	prev := threads
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	threads = n
	return prev
}

// Threads reports the number of goroutines a parallel loop uses.
func Threads() int {
	mu.Lock()
	defer mu.Unlock()
	return threads
}

// ensureWorkers starts the persistent workers up to k-1 (the caller is the k-th).
func ensureWorkers(k int) {
	mu.Lock()
	defer mu.Unlock()
	for started < k-1 {
		started++
		go func() {
			for t := range work {
				t.run()
			}
		}()
	}
}

// For calls fn(lo, hi) on consecutive sub-ranges covering [0, n), each at
// least grain long (except the last), on up to Threads() goroutines, and
// returns when all calls have returned. fn must be safe to run concurrently on
// disjoint ranges. With one thread or n ≤ grain it runs fn(0, n) inline.
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
	// Completion counts chunks, not workers, so a For nested inside fn
	// cannot deadlock: its caller runs every chunk itself if need be.
	t := &task{fn: fn, n: n, chunk: chunk, chunks: chunks}
	t.done.Add(chunks)
	helpers := min(k-1, chunks-1)
	for range helpers {
		// Never block: with the queue full (every worker busy, for example
		// inside nested loops, and stale tasks left by earlier calls), the
		// caller runs the remaining chunks itself.
		select {
		case work <- t:
		default:
		}
	}
	t.run()
	t.done.Wait()
}
