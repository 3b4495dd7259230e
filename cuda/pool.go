package cuda

import (
	"fmt"
	"math/bits"
	"sync"
)

// pool recycles device memory so that no op allocates from the driver once a workload is warm.
// Blocks come in size classes (powers of two up to 4 MiB, then multiples of 4 MiB) and go back to
// a free list of their class when released; the driver is asked for memory only when a list is
// empty, and on failure the pool frees its cached blocks and retries once. Releasing a block that
// kernels still use is safe because every user issues its work on the device's single stream, in
// order. Safe for concurrent use (buffers are released from GC cleanups).
type pool struct {
	mu    sync.Mutex
	be    Backend
	free  map[int][]uintptr
	stats PoolStats
}

// PoolStats counts the pool's traffic.
type PoolStats struct {
	DriverAllocs, DriverFrees int // calls to the backend
	Hits                      int // requests served from a free list
	InUseBytes, CachedBytes   int
}

func newPool(be Backend) *pool { return &pool{be: be, free: map[int][]uintptr{}} }

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
	class := sizeClass(bytes)
	p.mu.Lock()
	defer p.mu.Unlock()
	if list := p.free[class]; len(list) > 0 {
		ptr := list[len(list)-1]
		p.free[class] = list[:len(list)-1]
		p.stats.Hits++
		p.stats.CachedBytes -= class
		p.stats.InUseBytes += class
		return ptr, class, nil
	}
	ptr, err := p.be.Alloc(class)
	if err != nil && p.stats.CachedBytes > 0 {
		p.trimLocked()
		ptr, err = p.be.Alloc(class)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("cuda: allocate %d bytes (pool holds %d in use): %w", class, p.stats.InUseBytes, err)
	}
	p.stats.DriverAllocs++
	p.stats.InUseBytes += class
	return ptr, class, nil
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
