package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"holdgo/dist"
)

// oneProcess is the Before of the commands that run in one process (sample, fid, demo). Started by
// an MPI launcher with several ranks (mpirun -np N, srun), every rank would run the whole command into
// the same outputs, in any build (the launcher's environment says so: dist.LauncherRank, no MPI
// call). So every rank exits 2; rank 0 says why in one line and the others end silently.
func oneProcess(name string) cli.BeforeFunc {
	return func(*cli.Context) error {
		rank, parallel := dist.LauncherRank()
		if !parallel {
			return nil
		}
		if rank != 0 {
			return cli.Exit("", exitBadParams) // main prints nothing for an empty message
		}
		return cli.Exit(fmt.Sprintf("holdctl %s: runs in one process, not under an MPI launcher (this is rank 0 of a job of several): "+
			"run it without mpirun/srun (holdctl train is the data-parallel command)", name), exitBadParams)
	}
}
