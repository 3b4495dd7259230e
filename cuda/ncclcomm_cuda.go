//go:build cuda

package cuda

import (
	"fmt"
	"os"
	"sync"
	"unsafe"

	"gorgonia.org/cu"

	"holdgo/cuda/internal/nccl"
	"holdgo/dist"
)

// sideStream is the driver's second stream, for NCCL's all-reduces (NCCL engine, ncclcomm.go),
// with the two events that order it against the main stream. Non-blocking: it never waits for the
// legacy default stream.
type sideStream struct {
	once               sync.Once
	err                error
	stream             cu.Stream
	mainDone, sideDone cu.Event
}

// sideReady makes the side stream and its events on first use (in d.do).
func (d *driver) sideReady() error {
	d.side.once.Do(func() {
		if d.side.stream, d.side.err = cu.MakeStream(cu.NonBlocking); d.side.err != nil {
			d.side.err = fmt.Errorf("cuda: %s: create the collectives' stream: %w", d.name, d.side.err)
			return
		}
		for _, e := range []*cu.Event{&d.side.mainDone, &d.side.sideDone} {
			if *e, d.side.err = cu.MakeEvent(cu.DisableTiming); d.side.err != nil {
				d.side.err = fmt.Errorf("cuda: %s: create an event: %w", d.name, d.side.err)
				return
			}
		}
	})
	return d.side.err
}

// OnSide implements SideStreamer.
func (d *driver) OnSide(f func(stream unsafe.Pointer) error) error {
	return d.do(func() error {
		if err := d.sideReady(); err != nil {
			return err
		}
		return f(unsafe.Pointer(d.side.stream.C()))
	})
}

// SideWaitsMain implements SideStreamer: an event on the main stream, waited for on the side.
func (d *driver) SideWaitsMain() error {
	return d.do(func() error {
		if err := d.sideReady(); err != nil {
			return err
		}
		if err := d.side.mainDone.Record(d.stream); err != nil {
			return err
		}
		return d.side.stream.Wait(d.side.mainDone, 0)
	})
}

// MainWaitsSide implements SideStreamer.
func (d *driver) MainWaitsSide() error {
	return d.do(func() error {
		if err := d.sideReady(); err != nil {
			return err
		}
		if err := d.side.sideDone.Record(d.side.stream); err != nil {
			return err
		}
		return d.stream.Wait(d.side.sideDone, 0)
	})
}

// SyncSide implements SideStreamer.
func (d *driver) SyncSide() error {
	return d.do(func() error {
		if err := d.sideReady(); err != nil {
			return err
		}
		return d.side.stream.Synchronize()
	})
}

// OpenNCCL makes this rank's NCCL engine on dev for the ranks of comm (one process per GPU under
// mpirun or Slurm): strict pins NCCL's algorithm and protocol first (PinNCCL); rank 0 makes the
// unique id and comm carries it to the others (dist.ExchangeID), then every rank joins
// (ncclCommInitRank, with dev's context current). It returns the engine and the record of the NCCL
// in use (version and settings) for the run's log.
func OpenNCCL(dev *Device, comm dist.Communicator, strict bool) (*NCCL, NCCLRecord, error) {
	d, ok := dev.be.(*driver)
	if !ok {
		return nil, NCCLRecord{}, fmt.Errorf("cuda: NCCL runs on a GPU device, not on %s", dev.Name())
	}
	lib, err := loadNCCL()
	if err != nil {
		return nil, NCCLRecord{}, fmt.Errorf("cuda: %w", err)
	}
	settings, err := PinNCCL(strict, os.LookupEnv, os.Setenv)
	if err != nil {
		return nil, NCCLRecord{}, err
	}
	rec := NCCLRecord{Version: lib.Version(), Settings: settings}
	raw, err := dist.ExchangeID(comm, nccl.IDLen, func() ([]byte, error) {
		id, err := lib.UniqueID()
		return id[:], err
	})
	if err != nil {
		return nil, rec, err
	}
	var id nccl.ID
	copy(id[:], raw)
	var c *nccl.Comm
	if err := d.do(func() (err error) { c, err = lib.InitRank(comm.Size(), comm.Rank(), id); return err }); err != nil {
		return nil, rec, fmt.Errorf("cuda: NCCL rank %d of %d on %s: %w", comm.Rank(), comm.Size(), d.name, err)
	}
	n, err := NewNCCLEngine(dev, ncclCollective{c, d}, comm.Rank(), comm.Size(), "nccl "+rec.Version, 0)
	if err != nil {
		c.Destroy()
		return nil, rec, err
	}
	return n, rec, nil
}

// ncclCollective is an NCCL communicator as the engine's Collective: the calls that touch the
// device run with its context current.
type ncclCollective struct {
	c *nccl.Comm
	d *driver
}

func (n ncclCollective) AllReduce(send, recv uintptr, count int, f64 bool, stream unsafe.Pointer) error {
	return n.c.AllReduce(send, recv, count, f64, stream) // called inside OnSide: the context is current
}
func (n ncclCollective) AsyncError() error { return n.c.AsyncError() }
func (n ncclCollective) Abort() error      { return n.d.do(n.c.Abort) }
func (n ncclCollective) Destroy() error    { return n.d.do(n.c.Destroy) }
