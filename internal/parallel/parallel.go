// Package parallel is holdgo's one persistent worker pool. Large kernels split
// their index range into chunks with For; the chunks run on goroutines started
// once (no goroutine per call, none per element). Small ranges run inline.
//
// A training step issues many short loops back to back (a 512×128×128 GEMM
// takes ~160 µs on one core), and waking a parked goroutine costs more than
// that on this VM: measured, a worker parked on a channel never started its
// chunk of a 2×40 µs loop before the caller had run both. So both sides spin
// for a bounded window (spinWindow) before they park: an idle worker watches
// the queue, and the caller of For watches its chunks finish instead of
// sleeping on them (a sleeping caller is woken onto the finishing worker's
// processor, where it waits behind that worker's spin). With another busy
// process on the cores that made two threads slower than one (toy training
// step 4.6 ms against 3.6 ms); For now stops splitting loops while that
// happens (governor.go).
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinWindow bounds how long an idle worker watches for work, and how long
// For's caller watches for its chunks to finish, before parking.
const spinWindow = 100 * time.Microsecond

type task struct {
	fn     func(lo, hi int)
	n      int
	chunks int // chunk c is [c·n/chunks, (c+1)·n/chunks)
	next   atomic.Int64
	left   atomic.Int64 // chunks not yet finished
	done   sync.WaitGroup
}

// run takes chunks from t until none are left.
func (t *task) run() {
	for {
		c := int(t.next.Add(1)) - 1
		if c >= t.chunks {
			return
		}
		t.fn(c*t.n/t.chunks, (c+1)*t.n/t.chunks)
		t.left.Add(-1)
		t.done.Done()
	}
}

// runTimed is run for For's caller: it also returns an estimate of one
// chunk's time (ns), the mean of the chunks it ran without the slowest one.
// Leaving that one out matters: when the OS deschedules the caller in the
// middle of a chunk (a CPU hog on the other core), that chunk takes a whole
// time slice longer, and counting it would credit the split loop with a
// serial time it never had. 0 when the caller ran no chunk.
func (t *task) runTimed() (perChunk int64) {
	var ran, sum, slowest int64
	for ; ; ran++ {
		c := int(t.next.Add(1)) - 1
		if c >= t.chunks {
			break
		}
		start := now()
		t.fn(c*t.n/t.chunks, (c+1)*t.n/t.chunks)
		d := now() - start
		sum, slowest = sum+d, max(slowest, d)
		t.left.Add(-1)
		t.done.Done()
	}
	switch ran {
	case 0:
		return 0
	case 1:
		return sum
	}
	return (sum - slowest) / (ran - 1)
}

// wait returns when every chunk of t has finished, spinning for up to
// spinWindow before it sleeps.
func (t *task) wait() {
	deadline := time.Now().Add(spinWindow)
	for i := 0; t.left.Load() > 0; i++ {
		if i%64 == 63 && time.Now().After(deadline) {
			t.done.Wait()
			return
		}
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

// worker runs the chunks of the loops it is handed; between loops it spins
// for up to spinWindow before it parks on the queue. It keeps its own OS
// thread (LockOSThread) and never yields while it spins: measured, a worker
// that called runtime.Gosched in its spin loop was picked up now and then by
// another of the runtime's threads, and in about half of the processes the
// OS then kept both busy threads on one core for good (a 2-thread
// 512×128×128 product at the 1-thread time, 155 µs instead of 100).
func worker() {
	defer guard()
	runtime.LockOSThread()
	for {
		deadline := time.Now().Add(spinWindow)
		for i := 0; len(work) == 0; i++ {
			if i%64 == 63 && time.Now().After(deadline) {
				break
			}
		}
		(<-work).run()
	}
}

// For calls fn(lo, hi) on consecutive sub-ranges covering [0, n), each at
// least grain long and their lengths differing by at most one, on up to
// Threads() goroutines, and returns when all calls have returned. fn must be
// safe to run concurrently on disjoint ranges. With one thread or n < 2·grain
// it runs fn(0, n) inline.
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
	// A few chunks per thread balance uneven work without much overhead;
	// equal chunks (not n/chunks rounded up and a short last one) keep two
	// threads even: 43 GEMM panels as 6,…,6,1 left one thread 24 panels and
	// the other 19.
	chunks := min(n/grain, 4*k)
	if chunks <= 1 {
		fn(0, n)
		return
	}
	t0 := now()
	if gov.serial(t0) {
		// The same chunks, one after the other: a kernel that reduces per
		// chunk gives the same bits whichever way the governor decided.
		for c := range chunks {
			fn(c*n/chunks, (c+1)*n/chunks)
		}
		return
	}
	ensureWorkers(k)
	// Keep the caller on its OS thread while it may park in wait: a parked
	// goroutine is otherwise resumed by whichever runtime thread is free,
	// often woken on the worker's core, and the OS then left both busy
	// threads on one core for hundreds of milliseconds (measured: the
	// caller's CPU time spread over three threads, a 2-thread 512³ product
	// at 1-thread speed in some processes).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// A fresh task per call (one small allocation): a worker that dequeues
	// it late finds no chunks left, and nothing it reads is ever reused.
	t := &task{fn: fn, n: n, chunks: chunks}
	t.left.Store(int64(chunks))
	t.done.Add(chunks)
	for range min(k-1, chunks-1) {
		// Never block: with the queue full (every worker busy, for example
		// inside nested loops), the caller runs the remaining chunks itself.
		select {
		case work <- t:
		default:
		}
	}
	cpu0 := threadCPU()
	perChunk := t.runTimed()
	t.wait()
	if perChunk > 0 {
		t1, cpu := now(), threadCPU()
		if cpu >= 0 && cpu0 >= 0 {
			cpu -= cpu0
		} else {
			cpu = -1
		}
		gov.observe(t1, perChunk*int64(chunks), t1-t0, cpu)
	}
}
