package cuda

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync"
	"time"
)

// pool recycles device memory so that no op allocates from the driver once a workload is warm.
// Blocks come in size classes (powers of two up to 4 MiB, then multiples of 4 MiB) and go back to
// a free list of their class when released. A request is served from its own class's list, else
// from the smallest cached block of a larger class up to twice its own (a 12 MiB activation can
// reuse a free 16 MiB block instead of allocating), else by the driver. When the driver is out of
// memory the pool collects before it fails: it frees its cached blocks and retries; then it runs
// the garbage collector, so that the buffers of unreachable tensors come back through their
// cleanups, frees those too and retries once more. Releasing a block that kernels still use is
// safe because every user issues its work on the device's single stream, in order. Safe for
// concurrent use (buffers are released from GC cleanups).
//
// Device memory is invisible to Go's garbage collector: a loop that drops device tensors without
// allocating much on the Go heap would let unreachable tensors pile up on the device until the
// driver runs out, and a process would hold far more device memory than it uses (three sampling
// processes on one 80 GB H100 ran out of memory that way, each holding ~35 GB). So the pool paces
// collections the way GOGC=100 paces the heap: when the bytes in use would pass the goal — twice
// what was in use right after the last collection, and at least pacerFloor — it collects first,
// and the goal is reset from what is still in use afterwards. A process's device footprint then
// stays near twice its live data (plus the floor) however it allocates.
type pool struct {
	mu    sync.Mutex
	be    Backend
	free  map[int][]uintptr
	stats PoolStats
	floor int // pacerFloor, smaller in tests
	goal  int // collect before InUseBytes passes this
}

// PoolStats counts the pool's traffic.
type PoolStats struct {
	DriverAllocs, DriverFrees int // calls to the backend
	Hits                      int // requests served from a free list
	LargerHits                int // of which from a larger class
	Collections               int // garbage collections run to find memory
	Paced                     int // of which because the bytes in use reached the pacer's goal
	InUseBytes, CachedBytes   int
}

// pacerFloor is the smallest collection goal: below it no collection is paced.
const pacerFloor = 1 << 30

func newPool(be Backend) *pool {
	return &pool{be: be, free: map[int][]uintptr{}, floor: pacerFloor, goal: pacerFloor}
}

const poolGranule = 4 << 20

// sizeClass returns the block size that serves a request of bytes (> 0).
func sizeClass(bytes int) int {
	if bytes <= 256 {
		return 256
	}
	if bytes <= poolGranule {
		return 1 << bits.Len(uint(bytes-1))
	}
	return (bytes + poolGranule - 1) / poolGranule * poolGranule
}

// get returns a block of at least bytes (> 0) and its class.
func (p *pool) get(bytes int) (uintptr, int, error) {
	want := sizeClass(bytes)
	p.mu.Lock()
	if p.stats.InUseBytes+want > p.goal {
		p.stats.Paced++
		p.mu.Unlock()
		p.collect()
		p.mu.Lock()
		p.goal = max(p.floor, 2*(p.stats.InUseBytes+want))
	}
	if ptr, class, ok := p.cachedLocked(want); ok {
		p.mu.Unlock()
		return ptr, class, nil
	}
	ptr, err := p.be.Alloc(want)
	if err != nil && p.stats.CachedBytes > 0 {
		p.trimLocked()
		ptr, err = p.be.Alloc(want)
	}
	p.mu.Unlock()
	if err != nil {
		// Unreachable tensors still hold blocks until their cleanups run: collect, give the
		// cleanups a moment to return the blocks, then use or free them.
		p.collect()
		p.mu.Lock()
		if cptr, class, ok := p.cachedLocked(want); ok {
			p.mu.Unlock()
			return cptr, class, nil
		}
		p.trimLocked()
		ptr, err = p.be.Alloc(want)
		p.mu.Unlock()
	}
	if err != nil {
		return 0, 0, fmt.Errorf("cuda: allocate %d bytes (pool holds %d in use): %w", want, p.snapshot().InUseBytes, err)
	}
	p.mu.Lock()
	p.stats.DriverAllocs++
	p.stats.InUseBytes += want
	p.mu.Unlock()
	return ptr, want, nil
}

// cachedLocked takes a free block of class want, or of the smallest larger class up to 2·want.
func (p *pool) cachedLocked(want int) (uintptr, int, bool) {
	class := want
	if len(p.free[want]) == 0 {
		class = 0
		for c, list := range p.free {
			if len(list) > 0 && c > want && c <= 2*want && (class == 0 || c < class) {
				class = c
			}
		}
		if class == 0 {
			return 0, 0, false
		}
		p.stats.LargerHits++
	}
	list := p.free[class]
	ptr := list[len(list)-1]
	p.free[class] = list[:len(list)-1]
	p.stats.Hits++
	p.stats.CachedBytes -= class
	p.stats.InUseBytes += class
	return ptr, class, true
}

// collect runs the garbage collector and waits (up to 50 ms) until the cleanups it queued have
// stopped returning blocks to the pool.
func (p *pool) collect() {
	p.mu.Lock()
	p.stats.Collections++
	p.mu.Unlock()
	runtime.GC()
	last := -1
	for range 50 {
		time.Sleep(time.Millisecond)
		c := p.snapshot().CachedBytes
		if c == last {
			return
		}
		last = c
	}
}

// put returns a block to its free list.
func (p *pool) put(ptr uintptr, class int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free[class] = append(p.free[class], ptr)
	p.stats.InUseBytes -= class
	p.stats.CachedBytes += class
}

// trim frees every cached block.
func (p *pool) trim() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.trimLocked()
}

func (p *pool) trimLocked() error {
	var first error
	for class, list := range p.free {
		for _, ptr := range list {
			if err := p.be.Free(ptr); err != nil && first == nil {
				first = err
			}
			p.stats.DriverFrees++
			p.stats.CachedBytes -= class
		}
		delete(p.free, class)
	}
	return first
}

func (p *pool) snapshot() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}
