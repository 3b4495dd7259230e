// Package dist is the communication layer of data-parallel training: a
// Communicator over the ranks of a job. The default build has one
// implementation, Single (one rank, no cgo); built with -tags mpi, Open
// returns a communicator on the MPI C API (mpi.go, a thin cgo binding of the
// few calls training needs) when the process was started by mpirun or srun.
//
// Every method is collective (all ranks call it in the same order) except
// Rank, Size and Abort. Buffers are summed or copied in place.
package dist

import (
	"errors"
	"fmt"
)

// Communicator is a group of ranks that run the same program.
type Communicator interface {
	Rank() int // this process's rank, 0 … Size−1
	Size() int // the number of ranks

	// AllreduceF32 and AllreduceF64 replace buf on every rank by the
	// element-wise sum of the ranks' bufs (same length everywhere).
	AllreduceF32(buf []float32) error
	AllreduceF64(buf []float64) error

	// BcastF32, BcastF64 and BcastBytes copy root's buf into the other
	// ranks' bufs (same length everywhere).
	BcastF32(buf []float32, root int) error
	BcastF64(buf []float64, root int) error
	BcastBytes(buf []byte, root int) error

	// Barrier returns once every rank has called it.
	Barrier() error

	// Abort prints msg on standard error and ends every rank of the job
	// with exit status code. It does not return.
	Abort(code int, msg string)

	// Finalize ends the communicator; no call may follow.
	Finalize() error
}

// Single is the communicator of a process that runs alone: rank 0 of 1.
// Reductions and broadcasts leave their buffers as they are.
type Single struct{}

// Rank implements Communicator: 0.
func (Single) Rank() int { return 0 }

// Size implements Communicator: 1.
func (Single) Size() int { return 1 }

// AllreduceF32 implements Communicator: the sum over one rank is buf.
func (Single) AllreduceF32([]float32) error { return nil }

// AllreduceF64 implements Communicator.
func (Single) AllreduceF64([]float64) error { return nil }

// BcastF32 implements Communicator.
func (Single) BcastF32(_ []float32, root int) error { return checkRoot(root, 1) }

// BcastF64 implements Communicator.
func (Single) BcastF64(_ []float64, root int) error { return checkRoot(root, 1) }

// BcastBytes implements Communicator.
func (Single) BcastBytes(_ []byte, root int) error { return checkRoot(root, 1) }

// Barrier implements Communicator.
func (Single) Barrier() error { return nil }

// Abort implements Communicator: it prints msg and exits with code.
func (Single) Abort(code int, msg string) { abortProcess(code, msg) }

// Finalize implements Communicator.
func (Single) Finalize() error { return nil }

func checkRoot(root, size int) error {
	if root < 0 || root >= size {
		return fmt.Errorf("dist: root %d outside the %d rank(s)", root, size)
	}
	return nil
}

// Split returns the part of a global batch that rank holds: samples
// [first, first+n) of global, the same n on every rank. It is an error if
// size does not divide global.
func Split(global, rank, size int) (first, n int, err error) {
	switch {
	case size < 1 || rank < 0 || rank >= size:
		return 0, 0, fmt.Errorf("dist: rank %d of %d", rank, size)
	case global < size || global%size != 0:
		return 0, 0, fmt.Errorf("the global batch %d does not split evenly over %d ranks: choose a batch that is a multiple of %d", global, size, size)
	}
	n = global / size
	return rank * n, n, nil
}

// ErrPeer is wrapped by the errors of a collective call that failed because
// the job is going down (another rank failed).
var ErrPeer = errors.New("dist: collective call failed")
