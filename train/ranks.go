package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"holdgo/dist"
	"holdgo/internal/parallel"
)

// Data-parallel training (holdctl train under mpirun, docs/distributed.md):
// rank 0 owns the run directory (lock, config.yaml, log.csv, checkpoint,
// progress) and resolves the configuration; it sends the configuration to
// the other ranks, and its training state with Trainer.Broadcast.
// Every rank then computes its shard of the global batch and the ranks sum
// their gradients with one all-reduce per step.

// ExitError is an error that says how the process should end: Status 2 for bad input (flags, the run
// directory, a checkpoint), 130 for a run interrupted after writing its checkpoint, 1 for a run
// stopped by a non-finite step. Its ExitCode method makes it an exit coder for the command line.
type ExitError struct {
	Err    error
	Status int
}

func (e *ExitError) Error() string { return e.Err.Error() }

// ExitCode is the process exit status of the error.
func (e *ExitError) ExitCode() int { return e.Status }

func (e *ExitError) Unwrap() error { return e.Err }

// inputErr is an error of the input (flags, the run directory, a checkpoint): exit status 2.
func inputErr(format string, args ...any) error {
	return &ExitError{Err: fmt.Errorf(format, args...), Status: 2}
}

// CollectiveError is an error every rank meets at the same point (a decision
// of rank 0, or one taken on all-reduced values): each rank ends with its
// status, none aborts the job. Only rank 0 prints it (Quiet on the others).
type CollectiveError struct {
	Err   error
	Quiet bool
}

func (e CollectiveError) Error() string {
	if e.Quiet {
		return ""
	}
	return e.Err.Error()
}

func (e CollectiveError) Unwrap() error { return e.Err }

// collective marks err (nil stays nil) as met by every rank; rank r ≠ 0 keeps
// quiet.
func collective(err error, rank int) error {
	if err == nil {
		return nil
	}
	return CollectiveError{Err: err, Quiet: rank != 0}
}

// ExitStatus is the status a process gives err: the ExitCode of an error
// that has one (ExitError, or a command line's exit error), else 1.
func ExitStatus(err error) int {
	var ec interface{ ExitCode() int }
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// EndRanks finishes a rank: an error that the other ranks do not share ends
// the whole job through Abort (they may be waiting in a collective call),
// its message followed by "PROG: ending every rank of the job"; otherwise
// the communicator is finalised and err returned.
func EndRanks(comm dist.Communicator, err error, prog string) error {
	if comm.Size() == 1 {
		return err
	}
	var ce CollectiveError
	if err != nil && !errors.As(err, &ce) {
		comm.Abort(ExitStatus(err), fmt.Sprintf("%v\n%s: ending every rank of the job", err, prog))
	}
	if ferr := comm.Finalize(); ferr != nil && err == nil {
		return ferr
	}
	return err
}

// shareConfig sends rank 0's outcome of the setup to every rank: the
// run configuration, or rank 0's error (then every rank returns it, quiet
// off rank 0, with its exit status).
func shareConfig(comm dist.Communicator, cfg RunConfig, setupErr error) (RunConfig, error) {
	if comm.Size() == 1 {
		return cfg, setupErr
	}
	var payload []byte
	head := []float64{0, 0, 0} // ok, exit status, payload length
	if comm.Rank() == 0 {
		if setupErr != nil {
			payload = []byte(setupErr.Error())
			head[1] = float64(ExitStatus(setupErr))
		} else {
			var err error
			if payload, err = json.Marshal(cfg); err != nil {
				comm.Abort(1, fmt.Sprintf("encode the run configuration: %v", err))
			}
			head[0] = 1
		}
		head[2] = float64(len(payload))
	}
	if err := comm.BcastF64(head, 0); err != nil {
		return cfg, err
	}
	if comm.Rank() != 0 {
		payload = make([]byte, int(head[2]))
	}
	if err := comm.BcastBytes(payload, 0); err != nil {
		return cfg, err
	}
	if head[0] == 0 {
		if comm.Rank() == 0 {
			return cfg, collective(setupErr, 0)
		}
		return cfg, collective(&ExitError{Err: errors.New(string(payload)), Status: int(head[1])}, comm.Rank())
	}
	if comm.Rank() != 0 {
		cfg = RunConfig{}
		if err := json.Unmarshal(payload, &cfg); err != nil {
			return cfg, fmt.Errorf("rank %d: decode the run configuration: %w", comm.Rank(), err)
		}
	}
	return cfg, nil
}

// Stop reasons of a training loop.
const (
	runOn       byte = iota
	runDeadline      // the time limit reached
	runStopped       // interrupted (SIGINT, SIGTERM)
)

// stopReason says whether ctx asks the loop to stop, and why.
func stopReason(ctx context.Context) byte {
	switch {
	case ctx.Err() == nil:
		return runOn
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return runDeadline
	}
	return runStopped
}

// agreeStop returns rank 0's stop reason on every rank, so that all ranks
// stop after the same step (each rank's clock and signals may differ). It
// also checks that every rank is at rank 0's step: ranks out of step would
// wait for each other's collective calls forever.
func agreeStop(comm dist.Communicator, reason byte, step int) (byte, error) {
	if comm.Size() == 1 {
		return reason, nil
	}
	msg := []float64{float64(reason), float64(step)}
	if err := comm.BcastF64(msg, 0); err != nil {
		return runOn, err
	}
	if int(msg[1]) != step {
		return runOn, fmt.Errorf("rank %d is at step %d, rank 0 at step %d: the ranks' training states differ", comm.Rank(), step, int(msg[1]))
	}
	return byte(msg[0]), nil
}

// LocalRanks runs body on ranks local ranks (goroutines of this process,
// dist.NewLocal), each with one thread of the worker pool, and returns rank
// 0's error; an error the ranks do not share ends the process (EndRanks,
// prog naming the program). With one rank, body runs as is on dist.Single.
func LocalRanks(ranks int, prog string, body func(dist.Communicator) error) error {
	if ranks <= 1 {
		return body(dist.Single{})
	}
	comms, err := dist.NewLocal(ranks)
	if err != nil {
		return err
	}
	prev := parallel.SetThreads(1)
	defer parallel.SetThreads(prev)
	errs := make([]error, ranks)
	var wg sync.WaitGroup
	for r, comm := range comms {
		parallel.Go(&wg, func() {
			errs[r] = EndRanks(comm, body(comm), prog)
		})
	}
	wg.Wait()
	return errs[0]
}
