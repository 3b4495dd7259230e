//go:build cudashim

package cuda

import (
	"fmt"
	"sync"
	"unsafe"

	"holdgo/cuda/internal/shim"
)

// NewShimCollectives returns the size communicators of one in-process NCCL for the host shim,
// whose device addresses are host addresses: rank r's AllReduce blocks until every rank has
// called its k-th one, then the last to arrive sums the ranks' buffers (in rank order, float32 or
// float64 as asked) into every rank's, as ncclAllReduce does in place. Abort on one rank ends the
// others' pending and later calls, and their AsyncError reports it, as NCCL's does after a peer's
// ncclCommAbort. NewNCCLEngine over them runs the whole NCCL engine — bucket order, waits, the
// watchdog, the abort path — in CI, with goroutine ranks each on its own shim device.
func NewShimCollectives(size int) []Collective {
	w := &shimWorld{size: size, calls: make([]shimCall, size), by: -1}
	w.cond = sync.NewCond(&w.mu)
	out := make([]Collective, size)
	for r := range size {
		out[r] = &shimComm{w: w, rank: r}
	}
	return out
}

type shimWorld struct {
	mu      sync.Mutex
	cond    *sync.Cond
	size    int
	calls   []shimCall // this generation's call of each rank
	arrived int
	gen     int   // completed all-reduces
	err     error // a mismatch of this generation's calls, for every rank
	errGen  int
	by      int // the rank that aborted, -1 while none has
}

type shimCall struct {
	ptr   uintptr
	count int
	f64   bool
}

type shimComm struct {
	w    *shimWorld
	rank int
}

func (c *shimComm) AllReduce(send, recv uintptr, count int, f64 bool, _ unsafe.Pointer) error {
	if send != recv {
		return fmt.Errorf("shim NCCL: only in-place all-reduce (send %#x, recv %#x)", send, recv)
	}
	w := c.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.by >= 0 {
		return c.abortedErr()
	}
	w.calls[c.rank] = shimCall{send, count, f64}
	w.arrived++
	gen := w.gen
	if w.arrived == w.size {
		w.arrived = 0
		w.gen++
		if err := w.sum(); err != nil {
			w.err, w.errGen = err, gen
		}
		w.cond.Broadcast()
	} else {
		for w.gen == gen && w.by < 0 {
			w.cond.Wait()
		}
		if w.gen == gen {
			return c.abortedErr()
		}
	}
	if w.err != nil && w.errGen == gen {
		return w.err
	}
	return nil
}

// sum adds the ranks' buffers of this generation, in rank order, into every rank's (read and
// written through the shim's copies: its device addresses are host memory).
func (w *shimWorld) sum() error {
	first := w.calls[0]
	for r, c := range w.calls {
		if c.count != first.count || c.f64 != first.f64 {
			return fmt.Errorf("shim NCCL: rank %d all-reduces %d elements (float64 %v), rank 0 %d (float64 %v)", r, c.count, c.f64, first.count, first.f64)
		}
	}
	if first.f64 {
		return shimSum[float64](w.calls, first.count)
	}
	return shimSum[float32](w.calls, first.count)
}

func shimSum[T float32 | float64](calls []shimCall, n int) error {
	if n == 0 {
		return nil
	}
	var be shim.Backend
	bytes := n * int(unsafe.Sizeof(T(0)))
	acc, part := make([]T, n), make([]T, n)
	for _, c := range calls {
		if err := be.CopyDtoH(unsafe.Pointer(&part[0]), c.ptr, bytes); err != nil {
			return err
		}
		for i, v := range part {
			acc[i] += v
		}
	}
	for _, c := range calls {
		if err := be.CopyHtoD(c.ptr, unsafe.Pointer(&acc[0]), bytes); err != nil {
			return err
		}
	}
	return nil
}

func (c *shimComm) abortedErr() error {
	return fmt.Errorf("shim NCCL: communicator aborted by rank %d", c.w.by)
}

func (c *shimComm) AsyncError() error {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.w.by >= 0 && c.w.by != c.rank {
		return fmt.Errorf("shim NCCL: remote error: rank %d aborted", c.w.by)
	}
	return nil
}

func (c *shimComm) Abort() error {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	if c.w.by < 0 {
		c.w.by = c.rank
	}
	c.w.cond.Broadcast()
	return nil
}

func (c *shimComm) Destroy() error { return nil }
