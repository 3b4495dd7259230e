package dist

import "fmt"

// Device reductions: data-parallel training on GPUs sums the gradients where
// they are, in device memory, bucket by bucket while the backward pass goes
// on (NCCL on a second stream synchronised by events: cuda.NCCL), instead of
// copying them to the host for a Communicator's all-reduce. A DeviceComm is
// that engine; the host Communicator still carries the setup (the
// configuration, rank 0's state, the agreement to stop). NewLocalDevice is
// the in-process one: it sums the buffers of goroutine ranks, each with its
// own device, so that the bucketing, its order and the abort path run
// without a GPU.

// Buffer is device memory of float32 slots: tensor.Buffer satisfies it (dist
// does not import tensor; an engine that needs the device address asserts its
// own buffer type).
type Buffer interface {
	Len() int
	Read(dst []float32) error  // device → host
	Write(src []float32) error // host → device
}

// Elem is the element type a device reduction sums.
type Elem uint8

const (
	F32 Elem = iota // float32 slots
	F64             // pairs of float32 slots holding float64 bit patterns (tensor.PutFloat64s): the step's loss
)

func (e Elem) String() string {
	if e == F64 {
		return "float64"
	}
	return "float32"
}

// DeviceComm sums device buffers over the ranks of a job.
//
// StartAllreduce and Wait are collective in the same sense as a
// Communicator's calls: every rank starts the same sequence of buffers (the
// same lengths and element types, in the same order) and then waits.
type DeviceComm interface {
	Rank() int
	Size() int
	// Name says which engine reduces ("nccl 2.21.5", "in-process"), for the run's log.
	Name() string

	// StartAllreduce starts replacing buf on every rank by the element-wise sum
	// of the ranks' bufs, after the device work issued so far (the buffer's
	// producers) and without waiting for it: on a GPU the sum runs on a
	// second stream while the caller issues more work. The caller must not
	// touch buf before Wait.
	StartAllreduce(buf Buffer, elem Elem) error
	// Wait returns once every reduction started has completed and later device
	// work sees its result, or with the error that stopped them: this rank's,
	// or one wrapping ErrPeer when another rank failed.
	Wait() error
	// Fail ends the reductions of every rank: their pending and later calls
	// return an error wrapping ErrPeer that names err (NCCL: ncclCommAbort
	// here, the peers' ncclCommGetAsyncError). A rank that fails outside a
	// reduction calls it so the others stop within seconds instead of waiting.
	Fail(err error)
	// Close releases the engine; no call may follow.
	Close() error
}

// PeerError is the error of a reduction stopped because a rank failed.
type PeerError struct {
	Rank int   // the rank that failed
	Err  error // its error
}

func (e *PeerError) Error() string {
	return fmt.Sprintf("dist: rank %d failed (%v): device reductions stopped", e.Rank, e.Err)
}

// Unwrap makes a PeerError match ErrPeer.
func (e *PeerError) Unwrap() error { return ErrPeer }
