package cuda

import (
	"errors"
	"fmt"
	"sync"
	"time"
	"unsafe"

	"holdgo/dist"
)

// The NCCL engine of data-parallel training on GPUs (dist.DeviceComm): the gradient buckets are
// summed in device memory by NCCL's all-reduce on a side stream, so the reduction of one bucket
// runs while the backward pass computes the next.
//
//	main stream:  … backward(bucket k) ─┐ backward(bucket k+1) … ──────────────┐ clip, Adam
//	                                    │ event                                │ waits on event
//	side stream:                        └→ ncclAllReduce(bucket k) … (k+1) … ──┘
//
// StartAllreduce makes the side stream wait for the main stream's work issued so far (the
// bucket's producers: SideWaitsMain records an event on the main stream and has the side stream
// wait on it) and enqueues the all-reduce there; Wait makes the main stream wait for the side
// stream (MainWaitsSide) and blocks the host until the side stream is done, so that the error of a
// reduction is known before the optimizer step. A watchdog polls NCCL's asynchronous error
// (ncclCommGetAsyncError) while reductions are pending and aborts the communicator on one, which
// ends the blocked wait: a rank that died or aborted stops the others within a poll interval plus
// NCCL's own detection, instead of hanging. The engine's logic runs without a GPU: with a backend
// that has no side stream (the host shim) the all-reduce is issued in order on the host, and the
// tests give it a Collective that sums the goroutine ranks' shim buffers.

// Collective is what the engine calls of an NCCL communicator: nccl.Comm on a GPU (NewNCCL), a
// fake in the tests.
type Collective interface {
	// AllReduce enqueues recv = Σ_ranks send on stream (count float32 or float64 elements).
	AllReduce(send, recv uintptr, count int, f64 bool, stream unsafe.Pointer) error
	// AsyncError is nil while the communicator is healthy (ncclCommGetAsyncError).
	AsyncError() error
	// Abort ends the communicator's pending and later operations (ncclCommAbort).
	Abort() error
	// Destroy releases a healthy communicator (ncclCommDestroy).
	Destroy() error
}

// SideStreamer is implemented by backends with a second stream for the collectives (a real GPU).
type SideStreamer interface {
	// OnSide runs f with the side stream's handle (a cudaStream_t, as NCCL takes it) on the
	// backend's thread, where the device's context is current.
	OnSide(f func(stream unsafe.Pointer) error) error
	// SideWaitsMain makes the side stream's later work wait for the main stream's work issued so
	// far (an event recorded on the main stream).
	SideWaitsMain() error
	// MainWaitsSide makes the main stream's later work wait for the side stream's work issued so far.
	MainWaitsSide() error
	// SyncSide blocks the host until the side stream's work is done.
	SyncSide() error
}

// DefaultNCCLPoll is how often the watchdog reads NCCL's asynchronous error while a reduction is
// pending.
const DefaultNCCLPoll = 50 * time.Millisecond

// NCCL is the NCCL engine of one rank: a dist.DeviceComm over the device's memory.
type NCCL struct {
	dev        *Device
	coll       Collective
	side       SideStreamer // nil: the backend has one stream; the all-reduce is issued in order
	rank, size int
	name       string
	poll       time.Duration

	mu      sync.Mutex
	err     error // the first failure: this rank's (Fail) or a peer's (wrapping dist.ErrPeer)
	pending int   // reductions started since the last Wait
	aborted bool
	closed  bool
}

// NewNCCLEngine makes rank's engine over coll (an initialised communicator of size ranks) on dev;
// name says which NCCL ("nccl 2.21.5") in the run's log; poll is the watchdog's interval (0:
// DefaultNCCLPoll).
func NewNCCLEngine(dev *Device, coll Collective, rank, size int, name string, poll time.Duration) (*NCCL, error) {
	if dev == nil || coll == nil {
		return nil, errors.New("cuda: NCCL engine without a device or a communicator")
	}
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("cuda: NCCL engine for rank %d of %d", rank, size)
	}
	if poll <= 0 {
		poll = DefaultNCCLPoll
	}
	n := &NCCL{dev: dev, coll: coll, rank: rank, size: size, name: name, poll: poll}
	n.side, _ = dev.be.(SideStreamer)
	return n, nil
}

var _ dist.DeviceComm = (*NCCL)(nil)

// Rank implements dist.DeviceComm.
func (n *NCCL) Rank() int { return n.rank }

// Size implements dist.DeviceComm.
func (n *NCCL) Size() int { return n.size }

// Name implements dist.DeviceComm.
func (n *NCCL) Name() string { return n.name }

// StartAllreduce implements dist.DeviceComm: the sum of buf over the ranks, in place, enqueued
// after the device work issued so far.
func (n *NCCL) StartAllreduce(buf dist.Buffer, elem dist.Elem) error {
	if err := n.state(); err != nil {
		return err
	}
	b, ok := buf.(*buffer)
	if !ok || b.dev != n.dev {
		return fmt.Errorf("cuda: NCCL all-reduce of a buffer that is not on %s", n.dev.Name())
	}
	count, f64 := b.n, elem == dist.F64
	if f64 {
		if b.n%2 != 0 {
			return fmt.Errorf("cuda: NCCL all-reduce of %d float32 slots as float64 pairs", b.n)
		}
		count = b.n / 2
	}
	n.mu.Lock()
	n.pending++
	n.mu.Unlock()
	reduce := func(stream unsafe.Pointer) error { return n.coll.AllReduce(b.ptr, b.ptr, count, f64, stream) }
	var err error
	if n.side == nil {
		err = reduce(nil)
	} else if err = n.side.SideWaitsMain(); err != nil {
		return n.fail(fmt.Errorf("cuda: NCCL: order the all-reduce after the bucket: %w", err))
	} else {
		err = n.side.OnSide(reduce)
	}
	if err != nil {
		return n.fail(n.peerOr(fmt.Errorf("cuda: ncclAllReduce of %d %s: %w", count, elem, err)))
	}
	return nil
}

// Wait implements dist.DeviceComm: the main stream then sees every started reduction's result, and
// the host has waited for them, the watchdog reading NCCL's asynchronous error meanwhile.
func (n *NCCL) Wait() error {
	if err := n.state(); err != nil {
		return err
	}
	n.mu.Lock()
	pending := n.pending
	n.pending = 0
	n.mu.Unlock()
	if pending == 0 || n.side == nil {
		return n.check()
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the watchdog: a peer that died leaves this rank's all-reduce waiting forever
		defer wg.Done()
		t := time.NewTicker(n.poll)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if err := n.check(); err != nil {
					return
				}
			}
		}
	}()
	err := n.side.MainWaitsSide()
	if err == nil {
		err = n.side.SyncSide()
	}
	close(stop)
	wg.Wait()
	if err != nil {
		return n.fail(n.peerOr(fmt.Errorf("cuda: NCCL: wait for the all-reduce: %w", err)))
	}
	return n.check()
}

// check reads NCCL's asynchronous error; on one it aborts the communicator and records the failure
// as a peer's.
func (n *NCCL) check() error {
	if err := n.state(); err != nil {
		return err
	}
	if err := n.coll.AsyncError(); err != nil {
		return n.fail(fmt.Errorf("%w: NCCL reports %v", dist.ErrPeer, err))
	}
	return nil
}

// peerOr is err, or the peer's failure NCCL reports when there is one (an all-reduce fails
// because another rank aborted).
func (n *NCCL) peerOr(err error) error {
	if aerr := n.coll.AsyncError(); aerr != nil {
		return fmt.Errorf("%w: NCCL reports %v (%v)", dist.ErrPeer, aerr, err)
	}
	return err
}

// state is the recorded failure, or an error after Close.
func (n *NCCL) state() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return errors.New("cuda: NCCL engine used after Close")
	}
	return n.err
}

// fail records err as the engine's failure (the first one wins) and aborts the communicator once,
// so that the peers' reductions end instead of waiting for this rank; it returns the recorded
// failure.
func (n *NCCL) fail(err error) error {
	n.mu.Lock()
	if n.err == nil {
		n.err = err
	}
	abort := !n.aborted
	n.aborted = true
	first := n.err
	n.mu.Unlock()
	if abort {
		if aerr := n.coll.Abort(); aerr != nil {
			return errors.Join(first, fmt.Errorf("cuda: ncclCommAbort: %w", aerr))
		}
	}
	return first
}

// Fail implements dist.DeviceComm: this rank's err ends every rank's reductions (ncclCommAbort
// here; the peers' watchdogs read it as their communicator's asynchronous error).
func (n *NCCL) Fail(err error) {
	if err == nil {
		err = errors.New("cuda: NCCL engine failed")
	}
	n.fail(err)
}

// Close implements dist.DeviceComm: the communicator is destroyed (aborted already after a
// failure).
func (n *NCCL) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	aborted := n.aborted
	n.mu.Unlock()
	if aborted {
		return nil
	}
	if err := n.coll.Destroy(); err != nil {
		return fmt.Errorf("cuda: ncclCommDestroy: %w", err)
	}
	return nil
}
