package dist

import (
	"fmt"
	"strconv"
	"strings"
)

// LocalRankVars are the environment variables that give a rank's index among
// the ranks of its node, in the order LocalRank reads them: OpenMPI's mpirun,
// Slurm's srun, and torchrun-style launchers.
var LocalRankVars = []string{"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "LOCAL_RANK"}

// LocalRank reads this rank's index on its node from the first of
// LocalRankVars that lookup finds (os.LookupEnv in a process). source is the
// variable read; ok is false when none is set. A set variable that is not a
// decimal integer ≥ 0 is an error naming it.
func LocalRank(lookup func(string) (string, bool)) (rank int, source string, ok bool, err error) {
	for _, name := range LocalRankVars {
		v, set := lookup(name)
		if !set {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return 0, name, false, fmt.Errorf("dist: %s=%q is not a local rank (want an integer ≥ 0)", name, v)
		}
		return n, name, true, nil
	}
	return 0, "", false, nil
}

// DeviceForLocalRank is the GPU ordinal of the rank with index local on its
// node when count GPUs are visible to it: local itself while local < count;
// 0 when one GPU is visible (a launcher or a CUDA_VISIBLE_DEVICES wrapper gave
// each rank its own, or the ranks share one on purpose); otherwise an error,
// since more ranks than GPUs on a node would put two ranks on one GPU
// unasked (give it an ordinal, cuda:N, to do that on purpose).
func DeviceForLocalRank(local, count int) (int, error) {
	switch {
	case local < 0:
		return 0, fmt.Errorf("dist: local rank %d", local)
	case count < 1:
		return 0, fmt.Errorf("dist: no GPU visible to local rank %d", local)
	case local < count:
		return local, nil
	case count == 1:
		return 0, nil
	}
	return 0, fmt.Errorf("dist: local rank %d but only %d GPUs visible on this node: start at most %d ranks per node, or name each rank's GPU (--device cuda:N, CUDA_VISIBLE_DEVICES)", local, count, count)
}
