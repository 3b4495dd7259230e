package dist

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// abortProcess prints msg (with a trailing newline) and exits with code.
func abortProcess(code int, msg string) {
	if msg != "" {
		fmt.Fprint(os.Stderr, strings.TrimRight(msg, "\n")+"\n")
	}
	os.Exit(code)
}

// launcherEnv are the variables by which a launcher tells a process it is
// one rank of a parallel job: OpenMPI's mpirun, a PMIx launcher (srun
// --mpi=pmix, prterun) and PMI-1/2 launchers (srun --mpi=pmi2, MPICH's).
var launcherEnv = []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"}

// UnderLauncher reports whether the process was started by an MPI launcher
// (and which variable says so).
func UnderLauncher() (string, bool) {
	for _, k := range launcherEnv {
		if _, ok := os.LookupEnv(k); ok {
			return k, true
		}
	}
	return "", false
}

// launcherRankEnv are the variables that carry this process's rank under the launchers of
// launcherEnv, and launcherSizeEnv those that carry the job's size (PMIx gives the size only
// through its API).
var (
	launcherRankEnv = []string{"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}
	launcherSizeEnv = []string{"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}
)

// LauncherRank reports, from the environment alone (no MPI call, so in every build), whether the
// process is one rank of a job of several started by an MPI launcher, and its rank (0 when the
// launcher does not say). A job whose size is known to be 1 is not parallel. Commands that run in
// one process use it to refuse: rank 0 says so, the others end quietly.
func LauncherRank() (rank int, parallel bool) {
	if _, ok := UnderLauncher(); !ok {
		return 0, false
	}
	for _, k := range launcherSizeEnv {
		if v, ok := os.LookupEnv(k); ok && strings.TrimSpace(v) == "1" {
			return 0, false
		}
	}
	for _, k := range launcherRankEnv {
		if v, ok := os.LookupEnv(k); ok {
			if r, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && r >= 0 {
				return r, true
			}
		}
	}
	return 0, true
}
