package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/urfave/cli/v2"

	"holdgo/dist"
	"holdgo/internal/parallel"
	"holdgo/train"
)

// Data-parallel training (holdctl train under mpirun, docs/distributed.md):
// rank 0 owns the run directory (lock, config.yaml, log.csv, checkpoint,
// progress) and resolves the configuration; it sends the configuration to
// the other ranks, and its training state with train.Trainer.Broadcast.
// Every rank then computes its shard of the global batch and the ranks sum
// their gradients with one all-reduce per step.

// collectiveErr is an error every rank meets at the same point (a decision
// of rank 0, or one taken on all-reduced values): each rank ends with its
// status, none aborts the job. Only rank 0 prints it (quiet on the others).
type collectiveErr struct {
	err   error
	quiet bool
}

func (e collectiveErr) Error() string {
	if e.quiet {
		return ""
	}
	return e.err.Error()
}

func (e collectiveErr) Unwrap() error { return e.err }

// collective marks err (nil stays nil) as met by every rank; rank r ≠ 0 keeps
// quiet.
func collective(err error, rank int) error {
	if err == nil {
		return nil
	}
	return collectiveErr{err: err, quiet: rank != 0}
}

// exitCode is the status main gives err.
func exitCode(err error) int {
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	return 1
}

// endRanks finishes a rank: an error that the other ranks do not share ends
// the whole job through Abort (they may be waiting in a collective call);
// otherwise the communicator is finalised and err returned.
func endRanks(comm dist.Communicator, err error) error {
	if comm.Size() == 1 {
		return err
	}
	var ce collectiveErr
	if err != nil && !errors.As(err, &ce) {
		comm.Abort(exitCode(err), fmt.Sprintf("%v\nholdctl: ending every rank of the job", err))
	}
	if ferr := comm.Finalize(); ferr != nil && err == nil {
		return ferr
	}
	return err
}

// shareConfig sends rank 0's outcome of the setup to every rank: the
// run configuration, or rank 0's error (then every rank returns it, quiet
// off rank 0, with its exit status).
func shareConfig(comm dist.Communicator, cfg train.RunConfig, setupErr error) (train.RunConfig, error) {
	if comm.Size() == 1 {
		return cfg, setupErr
	}
	var payload []byte
	head := []float64{0, 0, 0} // ok, exit status, payload length
	if comm.Rank() == 0 {
		if setupErr != nil {
			payload = []byte(setupErr.Error())
			head[1] = float64(exitCode(setupErr))
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
		return cfg, collective(cli.Exit(string(payload), int(head[1])), comm.Rank())
	}
	if comm.Rank() != 0 {
		cfg = train.RunConfig{}
		if err := json.Unmarshal(payload, &cfg); err != nil {
			return cfg, fmt.Errorf("rank %d: decode the run configuration: %w", comm.Rank(), err)
		}
	}
	return cfg, nil
}

// Stop reasons of a training loop.
const (
	runOn       byte = iota
	runDeadline      // --time-limit reached
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

// trainLocalRanks runs body on ranks local ranks (goroutines of this
// process, dist.NewLocal), each with one thread of the worker pool, and
// returns rank 0's error; an error the ranks do not share ends the process
// (endRanks). With one rank, body runs as is on dist.Single.
func trainLocalRanks(ranks int, body func(dist.Communicator) error) error {
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
			errs[r] = endRanks(comm, body(comm))
		})
	}
	wg.Wait()
	return errs[0]
}
