package cuda

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"holdgo/dist"
	"holdgo/tensor"
)

// sideFake is a backend with a side stream whose calls are recorded; SyncSide blocks until the
// collective is aborted when hang is set (a peer that never arrives).
type sideFake struct {
	*fakeBackend
	mu    sync.Mutex
	calls []string
	coll  *recColl
	hang  bool
}

func (s *sideFake) rec(c string) {
	s.mu.Lock()
	s.calls = append(s.calls, c)
	s.mu.Unlock()
}

func (s *sideFake) OnSide(f func(unsafe.Pointer) error) error {
	s.rec("on-side")
	return f(unsafe.Pointer(&s.calls)) // any non-nil handle
}
func (s *sideFake) SideWaitsMain() error { s.rec("side-waits-main"); return nil }
func (s *sideFake) MainWaitsSide() error { s.rec("main-waits-side"); return nil }
func (s *sideFake) SyncSide() error {
	s.rec("sync-side")
	if s.hang {
		<-s.coll.aborted
		return errors.New("stream synchronize: an NCCL kernel was aborted")
	}
	return nil
}

// recColl is a one-rank collective that records its calls; asyncAfter makes AsyncError report a
// peer's failure from then on.
type recColl struct {
	mu         sync.Mutex
	calls      []string
	asyncAfter time.Time
	aborted    chan struct{}
}

func newRecColl() *recColl { return &recColl{aborted: make(chan struct{})} }

func (c *recColl) rec(s string) {
	c.mu.Lock()
	c.calls = append(c.calls, s)
	c.mu.Unlock()
}

func (c *recColl) AllReduce(send, recv uintptr, count int, f64 bool, stream unsafe.Pointer) error {
	if stream == nil || send != recv {
		return errors.New("want an in-place all-reduce on the side stream")
	}
	if f64 {
		c.rec("allreduce f64 " + strings.Repeat("x", count))
	} else {
		c.rec("allreduce f32 " + strings.Repeat("x", count))
	}
	return nil
}

func (c *recColl) AsyncError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.asyncAfter.IsZero() && time.Now().After(c.asyncAfter) {
		return errors.New("remote process exited or there was a network error")
	}
	return nil
}

func (c *recColl) Abort() error {
	c.rec("abort")
	select {
	case <-c.aborted:
	default:
		close(c.aborted)
	}
	return nil
}

func (c *recColl) Destroy() error { c.rec("destroy"); return nil }

// TestNCCLEngineStreams: on a backend with a side stream the engine orders each all-reduce after
// the main stream's work (SideWaitsMain, then the call on the side stream), and Wait makes the main
// stream wait for the side stream and the host for both; float64 buffers go as half as many
// elements; Close destroys a healthy communicator.
func TestNCCLEngineStreams(t *testing.T) {
	coll := newRecColl()
	be := &sideFake{fakeBackend: newFake(), coll: coll}
	dev := NewDevice(be)
	n, err := NewNCCLEngine(dev, coll, 0, 1, "nccl test", time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tensor.Zeros(3).ToDevice(dev)
	b, _ := tensor.Zeros(4).ToDevice(dev)
	if err := n.StartAllreduce(a.Buffer(), dist.F32); err != nil {
		t.Fatal(err)
	}
	if err := n.StartAllreduce(b.Buffer(), dist.F64); err != nil {
		t.Fatal(err)
	}
	if err := n.Wait(); err != nil {
		t.Fatal(err)
	}
	if err := n.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"side-waits-main", "on-side", "side-waits-main", "on-side", "main-waits-side", "sync-side"}
	if !slices.Equal(be.calls, want) {
		t.Errorf("stream calls %v, want %v", be.calls, want)
	}
	if want := []string{"allreduce f32 xxx", "allreduce f64 xx", "destroy"}; !slices.Equal(coll.calls, want) {
		t.Errorf("NCCL calls %v, want %v", coll.calls, want)
	}
	if err := n.StartAllreduce(a.Buffer(), dist.F32); err == nil {
		t.Error("an all-reduce after Close was accepted")
	}
}

// TestNCCLEngineWatchdog: a peer that dies leaves this rank's wait blocked on its side stream; the
// watchdog reads NCCL's asynchronous error, aborts the communicator (which ends the wait) and Wait
// returns an error wrapping dist.ErrPeer, within a few poll intervals.
func TestNCCLEngineWatchdog(t *testing.T) {
	coll := newRecColl()
	be := &sideFake{fakeBackend: newFake(), coll: coll, hang: true}
	dev := NewDevice(be)
	n, err := NewNCCLEngine(dev, coll, 1, 2, "nccl test", 2*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tensor.Zeros(8).ToDevice(dev)
	if err := n.StartAllreduce(a.Buffer(), dist.F32); err != nil {
		t.Fatal(err)
	}
	coll.mu.Lock()
	coll.asyncAfter = time.Now().Add(20 * time.Millisecond)
	coll.mu.Unlock()
	start := time.Now()
	err = n.Wait()
	if took := time.Since(start); !errors.Is(err, dist.ErrPeer) || took > 2*time.Second {
		t.Fatalf("Wait after a peer died: %v after %v, want an ErrPeer within seconds", err, took)
	}
	if !strings.Contains(err.Error(), "remote process exited") {
		t.Errorf("error %q does not give NCCL's reason", err)
	}
	if err := n.StartAllreduce(a.Buffer(), dist.F32); !errors.Is(err, dist.ErrPeer) {
		t.Errorf("an all-reduce after the failure: %v, want the recorded ErrPeer", err)
	}
	if err := n.Close(); err != nil {
		t.Errorf("Close after an abort: %v", err)
	}
	if got := strings.Join(coll.calls, ","); got != "allreduce f32 xxxxxxxx,abort" {
		t.Errorf("NCCL calls %s: want one abort, no destroy of an aborted communicator", got)
	}
}

// TestNCCLEngineRefusals: the engine's arguments, a buffer of another device and an odd float64
// buffer are refused with errors that say so; Fail aborts once and every later call returns its
// error.
func TestNCCLEngineRefusals(t *testing.T) {
	coll := newRecColl()
	dev := NewDevice(&sideFake{fakeBackend: newFake(), coll: coll})
	for _, c := range []struct{ rank, size int }{{-1, 2}, {2, 2}, {0, 0}} {
		if _, err := NewNCCLEngine(dev, coll, c.rank, c.size, "", 0); err == nil {
			t.Errorf("rank %d of %d accepted", c.rank, c.size)
		}
	}
	if _, err := NewNCCLEngine(nil, coll, 0, 1, "", 0); err == nil {
		t.Error("nil device accepted")
	}
	n, err := NewNCCLEngine(dev, coll, 0, 1, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := tensor.Zeros(4).ToDevice(NewDevice(newFake()))
	if err := n.StartAllreduce(other.Buffer(), dist.F32); err == nil || !strings.Contains(err.Error(), "not on") {
		t.Errorf("a buffer of another device: %v", err)
	}
	odd, _ := tensor.Zeros(3).ToDevice(dev)
	if err := n.StartAllreduce(odd.Buffer(), dist.F64); err == nil || !strings.Contains(err.Error(), "float64 pairs") {
		t.Errorf("an odd float64 buffer: %v", err)
	}
	injected := errors.New("injected")
	n.Fail(injected)
	n.Fail(errors.New("second"))
	if err := n.Wait(); !errors.Is(err, injected) {
		t.Errorf("Wait after Fail: %v", err)
	}
	if got := strings.Join(coll.calls, ","); got != "abort" {
		t.Errorf("NCCL calls %s, want one abort", got)
	}
}
