package dist

import (
	"fmt"
	"math"
	"sync"
)

// NewLocalDevice returns the device communicators of size goroutine ranks of
// this process (rank r uses the r-th), the in-process DeviceComm. Each rank has
// a worker goroutine that runs its reductions in the order they were started,
// as a second stream would, while the rank goes on issuing work. A reduction
// meets every rank's buffer, sums them in rank order in the buffers' precision
// (rank 0 + rank 1 + …, so N ranks equal one process up to the order of the
// partial sums, whichever rank comes last) and writes the sum to every buffer.
// The buffers are read and written through their devices (host copies), so
// any device works: the CPU, the Reference, the CUDA host shim.
func NewLocalDevice(size int) ([]DeviceComm, error) {
	if size < 1 {
		return nil, fmt.Errorf("dist: %d local ranks (need at least 1)", size)
	}
	g := &deviceGroup{size: size, arrived: map[int][]localJob{}}
	g.cond = sync.NewCond(&g.mu)
	out := make([]DeviceComm, size)
	for r := range size {
		l := &localDevice{rank: r, g: g, jobs: make(chan localJob, 1024)}
		l.idle.L = &l.mu
		go l.work()
		out[r] = l
	}
	return out, nil
}

type localJob struct {
	buf  Buffer
	elem Elem
	seq  int // the rank's count of reductions started before this one
}

// deviceGroup is what the ranks share: the reductions by sequence number as
// the ranks' workers arrive, and the failure that ended them.
type deviceGroup struct {
	size int

	mu      sync.Mutex
	cond    *sync.Cond
	arrived map[int][]localJob // seq → the jobs of the ranks arrived, by rank (nil: not yet)
	done    map[int]error      // seq → the reduction's outcome, kept until every rank has read it
	left    map[int]int        // seq → ranks yet to read done
	failed  error              // a *PeerError once a rank failed
}

type localDevice struct {
	rank int
	g    *deviceGroup
	jobs chan localJob

	mu      sync.Mutex
	idle    sync.Cond // signalled when pending drops to 0
	started int       // reductions started (the next seq)
	pending int       // started, not yet completed
	err     error     // the first reduction error since the last Wait
	closed  bool
}

// work runs the rank's reductions in order, as a stream.
func (l *localDevice) work() {
	for j := range l.jobs {
		err := l.g.reduce(l.rank, j)
		l.mu.Lock()
		if err != nil && l.err == nil {
			l.err = err
		}
		if l.pending--; l.pending == 0 {
			l.idle.Broadcast()
		}
		l.mu.Unlock()
	}
}

// reduce is rank's part of reduction j.seq: it registers its buffer, the last
// rank to arrive sums them all, and every rank returns the outcome.
func (g *deviceGroup) reduce(rank int, j localJob) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.failed != nil {
		return g.failed
	}
	jobs := g.arrived[j.seq]
	if jobs == nil {
		jobs = make([]localJob, g.size)
	}
	jobs[rank] = j
	g.arrived[j.seq] = jobs
	count := 0
	for _, x := range jobs {
		if x.buf != nil {
			count++
		}
	}
	if count == g.size {
		delete(g.arrived, j.seq)
		if g.done == nil {
			g.done, g.left = map[int]error{}, map[int]int{}
		}
		g.done[j.seq], g.left[j.seq] = sumInto(jobs), g.size
		g.cond.Broadcast()
	}
	for {
		if err, ok := g.done[j.seq]; ok {
			if g.left[j.seq]--; g.left[j.seq] == 0 {
				delete(g.done, j.seq)
				delete(g.left, j.seq)
			}
			return err
		}
		if g.failed != nil {
			return g.failed
		}
		g.cond.Wait()
	}
}

// sumInto sums the ranks' buffers in rank order and writes the sum to each.
func sumInto(jobs []localJob) error {
	n, elem := jobs[0].buf.Len(), jobs[0].elem
	for r, j := range jobs {
		if j.buf.Len() != n || j.elem != elem {
			return fmt.Errorf("dist: device all-reduce of %d %s slots on rank 0 and %d %s slots on rank %d", n, elem, j.buf.Len(), j.elem, r)
		}
	}
	if elem == F64 && n%2 != 0 {
		return fmt.Errorf("dist: device all-reduce of float64 over %d float32 slots", n)
	}
	sum, x := make([]float32, n), make([]float32, n)
	if err := jobs[0].buf.Read(sum); err != nil {
		return fmt.Errorf("dist: device all-reduce, rank 0: %w", err)
	}
	for r, j := range jobs[1:] {
		if err := j.buf.Read(x); err != nil {
			return fmt.Errorf("dist: device all-reduce, rank %d: %w", r+1, err)
		}
		if elem == F64 {
			for i := 0; i < n; i += 2 {
				putF64(sum[i:], getF64(sum[i:])+getF64(x[i:]))
			}
		} else {
			addInto(sum, x)
		}
	}
	for r, j := range jobs {
		if err := j.buf.Write(sum); err != nil {
			return fmt.Errorf("dist: device all-reduce, rank %d: %w", r, err)
		}
	}
	return nil
}

func getF64(s []float32) float64 {
	return math.Float64frombits(uint64(math.Float32bits(s[0])) | uint64(math.Float32bits(s[1]))<<32)
}

func putF64(s []float32, v float64) {
	b := math.Float64bits(v)
	s[0], s[1] = math.Float32frombits(uint32(b)), math.Float32frombits(uint32(b>>32))
}

// Rank implements DeviceComm.
func (l *localDevice) Rank() int { return l.rank }

// Size implements DeviceComm.
func (l *localDevice) Size() int { return l.g.size }

// Name implements DeviceComm.
func (l *localDevice) Name() string { return "in-process" }

// StartAllreduce implements DeviceComm: the rank's worker runs it.
func (l *localDevice) StartAllreduce(buf Buffer, elem Elem) error {
	if buf == nil {
		return fmt.Errorf("dist: device all-reduce of a nil buffer")
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return fmt.Errorf("dist: device all-reduce after Close")
	}
	j := localJob{buf: buf, elem: elem, seq: l.started}
	l.started++
	l.pending++
	l.mu.Unlock()
	l.jobs <- j
	return nil
}

// Wait implements DeviceComm.
func (l *localDevice) Wait() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.pending > 0 {
		l.idle.Wait()
	}
	err := l.err
	l.err = nil
	return err
}

// Fail implements DeviceComm: every rank's reductions, waiting or to come,
// return a *PeerError naming this rank.
func (l *localDevice) Fail(err error) {
	g := l.g
	g.mu.Lock()
	if g.failed == nil {
		g.failed = &PeerError{Rank: l.rank, Err: err}
	}
	g.cond.Broadcast()
	g.mu.Unlock()
}

// Close implements DeviceComm: the worker ends after the reductions started.
func (l *localDevice) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.closed = true
		close(l.jobs)
	}
	return nil
}
