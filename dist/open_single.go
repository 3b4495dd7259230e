//go:build !mpi

package dist

import "fmt"

// Built reports whether this binary has the MPI communicator (-tags mpi).
const Built = false

// Open returns the job's communicator. Without -tags mpi it is Single; a
// process started by an MPI launcher is an error, since it would train
// alone and write the same run directory as its peers.
func Open() (Communicator, error) {
	if k, ok := UnderLauncher(); ok {
		return nil, fmt.Errorf("started by an MPI launcher (%s is set) but built without MPI: build with -tags mpi (make build-mpi)", k)
	}
	return Single{}, nil
}
