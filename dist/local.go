package dist

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"holdgo/internal/vec"
)

// Local ranks are goroutines of one process: data-parallel training on the
// cores of one machine without MPI. A small network (holdctl demo's MLP at
// batch 256) splits poorly inside each operation (a 128×128 product is too
// short to hand half of it to another core), while two ranks with half the
// batch each keep both cores busy for the whole step.
//
// Collectives meet at a barrier. AllreduceF32/F64 sum in rank order, in the
// buffers' precision (as MPI's reduction of one node): rank r sums elements
// [r·n/size, (r+1)·n/size) of every rank's buffer and writes the sum into all
// of them, so the reduction runs on every rank at once and its result does
// not depend on which rank arrives last.

// NewLocal returns the communicators of size ranks in this process, one per
// goroutine (rank r uses the r-th). Every rank must make the same collective
// calls in the same order, as with MPI.
func NewLocal(size int) ([]Communicator, error) {
	if size < 1 {
		return nil, fmt.Errorf("dist: %d local ranks (need at least 1)", size)
	}
	g := &localGroup{size: size, bufs: make([]any, size), spin: runtime.GOMAXPROCS(0) >= size}
	g.cond = sync.NewCond(&g.mu)
	out := make([]Communicator, size)
	for r := range size {
		out[r] = &local{rank: r, g: g}
	}
	return out, nil
}

type local struct {
	rank int
	g    *localGroup
	// parkFor counts the barriers this rank parks at without spinning, after
	// two spins in a row ran out (another process on the cores: see
	// spinWindow); misses counts those in a row.
	parkFor, misses int
}

// localGroup is the state the ranks share: a reusable barrier (arrived,
// round) and the buffers of the collective in progress (under mu).
type localGroup struct {
	size int
	spin bool // waiting ranks spin before they park: every rank has a processor

	arrived atomic.Int64
	round   atomic.Int64
	mu      sync.Mutex
	cond    *sync.Cond // parked waiters of the barrier, signalled under mu

	registered int // ranks that have named this collective's buffer
	bufs       []any
	op         string
	err        error // the current collective's mismatch, seen by every rank
}

// spinWindow bounds how long a rank that reached a barrier watches for the
// others before it parks. Parking and waking a goroutine costs about 0.1 ms
// on a VM (the woken thread's processor must be woken too): four barriers a
// step (the all-reduce, and the loop's agreement on stopping) made two local
// ranks of holdctl demo 2.5 ms per step against 1.8 ms without them.
//
// Spinning hurts when another process holds a core: the rank that shares it
// runs at half speed while its partner spins on the other core, which the
// OS then does not hand over (demo step with a CPU hog: 5.3 ms spinning, 3.2
// ms parking, 2.9 ms for one trainer on one thread). So a rank whose spins
// ran out twice in a row parks at the next parkAfterMiss barriers before it
// tries again; on a quiet machine the waits are about 0.1 ms and a spin
// runs out only now and then (the OS took the other rank's core a moment).
const (
	spinWindow    = time.Millisecond
	parkAfterMiss = 64
)

// meet records rank's part of a collective (op, buf; nil for a plain
// barrier) and returns once every rank has arrived. The first rank to arrive
// names the operation; a rank that calls another one marks the collective
// failed for all.
func (g *localGroup) meet(l *local, op string, buf any) {
	rank := l.rank
	g.mu.Lock()
	if g.registered == 0 {
		g.op, g.err = op, nil
	} else if g.op != op && g.err == nil {
		g.err = fmt.Errorf("dist: rank %d calls %s while another rank calls %s", rank, op, g.op)
	}
	g.bufs[rank] = buf
	if g.registered++; g.registered == g.size {
		g.registered = 0
	}
	g.mu.Unlock()
	g.arrive(l)
}

// arrive returns once every rank has called it (a barrier): the last to
// arrive opens the next round; the others watch the round for up to
// spinWindow (unless l parks for a while, see spinWindow), then park on
// cond.
func (g *localGroup) arrive(l *local) {
	round := g.round.Load()
	if g.arrived.Add(1) == int64(g.size) {
		g.arrived.Store(0)
		g.mu.Lock()
		g.round.Add(1)
		g.cond.Broadcast()
		g.mu.Unlock()
		return
	}
	if l.parkFor > 0 {
		l.parkFor--
	} else if g.spin {
		deadline := time.Now().Add(spinWindow)
		for i := 0; g.round.Load() == round && (i%64 != 63 || time.Now().Before(deadline)); i++ {
		}
		if g.round.Load() != round {
			l.misses = 0
		} else if l.misses++; l.misses == 2 {
			l.parkFor, l.misses = parkAfterMiss, 0
		}
	}
	g.mu.Lock()
	for g.round.Load() == round {
		g.cond.Wait()
	}
	g.mu.Unlock()
}

// enter registers rank's buffer of n elements for op and returns once every
// rank has: an error (the same on every rank) if the ranks' operations or
// lengths differ. The group's fields are not written again before every
// rank has passed leave.
func (l *local) enter(op string, buf any, n int) error {
	g := l.g
	g.meet(l, op, buf)
	if g.err != nil {
		return g.err
	}
	for r, b := range g.bufs {
		if m := bufLen(b); m != n {
			return fmt.Errorf("dist: %s of %d elements on rank %d and %d on rank %d", g.op, n, l.rank, m, r)
		}
	}
	return nil
}

// leave is the barrier that ends a collective: no rank returns (and reuses
// its buffer) while another still reads or writes it. Every rank calls
// leave, also after an error from enter, so that the next collective starts
// from a clean barrier.
func (l *local) leave() { l.g.arrive(l) }

func bufLen(b any) int {
	switch s := b.(type) {
	case []float32:
		return len(s)
	case []float64:
		return len(s)
	case []byte:
		return len(s)
	}
	return 0
}

func allreduce[T float32 | float64](l *local, op string, buf []T) error {
	err := l.enter(op, buf, len(buf))
	if err == nil {
		// This rank's part of the elements: summed into rank 0's buffer
		// in rank order, then copied to the others.
		g, n := l.g, len(buf)
		lo, hi := l.rank*n/g.size, (l.rank+1)*n/g.size
		sum := g.bufs[0].([]T)[lo:hi]
		for _, b := range g.bufs[1:] {
			addInto(sum, b.([]T)[lo:hi])
		}
		for _, b := range g.bufs[1:] {
			copy(b.([]T)[lo:hi], sum)
		}
	}
	l.leave()
	return err
}

// addInto sets sum[i] += x[i] in the slices' precision (float32 with SIMD:
// the same bits as the loop).
func addInto[T float32 | float64](sum, x []T) {
	if s, ok := any(sum).([]float32); ok {
		vec.Add(s, s, any(x).([]float32))
		return
	}
	for i, v := range x {
		sum[i] += v
	}
}

func bcast[T any](l *local, op string, buf []T, root int) error {
	if err := checkRoot(root, l.g.size); err != nil {
		return err
	}
	err := l.enter(op, buf, len(buf))
	if err == nil && l.rank != root {
		copy(buf, l.g.bufs[root].([]T))
	}
	l.leave()
	return err
}

// Rank implements Communicator.
func (l *local) Rank() int { return l.rank }

// Size implements Communicator.
func (l *local) Size() int { return l.g.size }

// AllreduceF32 implements Communicator.
func (l *local) AllreduceF32(buf []float32) error { return allreduce(l, "allreduce f32", buf) }

// AllreduceF64 implements Communicator.
func (l *local) AllreduceF64(buf []float64) error { return allreduce(l, "allreduce f64", buf) }

// BcastF32 implements Communicator.
func (l *local) BcastF32(buf []float32, root int) error { return bcast(l, "bcast f32", buf, root) }

// BcastF64 implements Communicator.
func (l *local) BcastF64(buf []float64, root int) error { return bcast(l, "bcast f64", buf, root) }

// BcastBytes implements Communicator.
func (l *local) BcastBytes(buf []byte, root int) error { return bcast(l, "bcast bytes", buf, root) }

// Barrier implements Communicator.
func (l *local) Barrier() error {
	err := l.enter("barrier", nil, 0)
	l.leave()
	return err
}

// Abort implements Communicator: the ranks share the process, so it ends
// the process (every rank) with code.
func (l *local) Abort(code int, msg string) { abortProcess(code, msg) }

// Finalize implements Communicator.
func (l *local) Finalize() error { return nil }
