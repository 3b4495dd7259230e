package train

import (
	"fmt"
	"sync"

	"holdgo/dist"
)

// loopback is an in-process dist.Communicator for tests: size ranks run as
// goroutines, and each collective waits for all of them, then sums (in rank
// order, in the buffers' precision, as MPI's reduction on one machine) or
// copies. It checks that every rank makes the same call with the same length.
type loopback struct {
	rank int
	g    *group
}

type group struct {
	size    int
	mu      sync.Mutex
	cond    *sync.Cond
	round   int
	arrived int
	bufs    []any
	op      string
	failed  error
}

func newLoopback(size int) []dist.Communicator {
	g := &group{size: size, bufs: make([]any, size)}
	g.cond = sync.NewCond(&g.mu)
	out := make([]dist.Communicator, size)
	for r := range size {
		out[r] = &loopback{rank: r, g: g}
	}
	return out
}

// collective registers rank's buffer for op; the last rank to arrive runs do
// on all buffers; everyone returns after it.
func (l *loopback) collective(op string, buf any, do func(bufs []any) error) error {
	g := l.g
	g.mu.Lock()
	defer g.mu.Unlock()
	round := g.round
	if g.arrived == 0 {
		g.op = op
	} else if g.op != op && g.failed == nil {
		g.failed = fmt.Errorf("rank %d calls %s while another rank calls %s", l.rank, op, g.op)
	}
	g.bufs[l.rank] = buf
	g.arrived++
	if g.arrived == g.size {
		if g.failed == nil {
			g.failed = do(g.bufs)
		}
		g.arrived = 0
		g.round++
		g.cond.Broadcast()
	} else {
		for g.round == round {
			g.cond.Wait()
		}
	}
	return g.failed
}

func (l *loopback) Rank() int { return l.rank }
func (l *loopback) Size() int { return l.g.size }

func sumInto[T float32 | float64](bufs []any) error {
	n := len(bufs[0].([]T))
	sum := make([]T, n)
	for _, b := range bufs {
		s := b.([]T)
		if len(s) != n {
			return fmt.Errorf("all-reduce of %d and %d elements", n, len(s))
		}
		for i, v := range s {
			sum[i] += v
		}
	}
	for _, b := range bufs {
		copy(b.([]T), sum)
	}
	return nil
}

func bcastFrom[T any](root int) func([]any) error {
	return func(bufs []any) error {
		src := bufs[root].([]T)
		for _, b := range bufs {
			if len(b.([]T)) != len(src) {
				return fmt.Errorf("broadcast of %d and %d elements", len(src), len(b.([]T)))
			}
			copy(b.([]T), src)
		}
		return nil
	}
}

func (l *loopback) AllreduceF32(buf []float32) error {
	return l.collective("allreduce f32", buf, sumInto[float32])
}
func (l *loopback) AllreduceF64(buf []float64) error {
	return l.collective("allreduce f64", buf, sumInto[float64])
}
func (l *loopback) BcastF32(buf []float32, root int) error {
	return l.collective("bcast f32", buf, bcastFrom[float32](root))
}
func (l *loopback) BcastF64(buf []float64, root int) error {
	return l.collective("bcast f64", buf, bcastFrom[float64](root))
}
func (l *loopback) BcastBytes(buf []byte, root int) error {
	return l.collective("bcast bytes", buf, bcastFrom[byte](root))
}
func (l *loopback) Barrier() error {
	return l.collective("barrier", nil, func([]any) error { return nil })
}
func (l *loopback) Abort(code int, msg string) { panic(fmt.Sprintf("abort %d: %s", code, msg)) }
func (l *loopback) Finalize() error            { return nil }
