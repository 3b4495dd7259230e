package dist

import (
	"fmt"
	"os"
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
