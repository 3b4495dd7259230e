package dist

import "fmt"

// ExchangeID gives every rank of comm the same opaque id of n bytes, made by
// rank 0 alone: the bootstrap of a device communicator such as NCCL's, whose
// ncclGetUniqueId (128 bytes) runs on one rank and whose ncclCommInitRank needs
// the id on all. newID runs on rank 0 only; the id travels in one BcastBytes
// of n+1 bytes, the first saying whether rank 0 made it, so that a failure
// there (or an id of the wrong length) is an error on every rank, not a hang:
// rank 0 returns its own error, the others one wrapping ErrPeer.
func ExchangeID(comm Communicator, n int, newID func() ([]byte, error)) ([]byte, error) {
	if n < 1 {
		return nil, fmt.Errorf("dist: unique id of %d bytes", n)
	}
	buf := make([]byte, 1+n)
	var made error
	if comm.Rank() == 0 {
		id, err := newID()
		switch {
		case err != nil:
			made = fmt.Errorf("dist: make the unique id: %w", err)
		case len(id) != n:
			made = fmt.Errorf("dist: the unique id has %d bytes, want %d", len(id), n)
		default:
			buf[0] = 1
			copy(buf[1:], id)
		}
	}
	if err := comm.BcastBytes(buf, 0); err != nil {
		return nil, fmt.Errorf("dist: broadcast the unique id: %w", err)
	}
	switch {
	case made != nil:
		return nil, made
	case buf[0] != 1:
		return nil, fmt.Errorf("%w: rank 0 could not make the unique id", ErrPeer)
	}
	return buf[1:], nil
}
