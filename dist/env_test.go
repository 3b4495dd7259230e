package dist

import (
	"os"
	"testing"
)

// unsetAll removes the launcher variables for the rest of the test (t.Setenv
// must have recorded them first so that they are restored).
func unsetAll(t *testing.T) {
	t.Helper()
	for _, k := range launcherEnv {
		os.Unsetenv(k)
	}
}

// TestLauncherRank: the rank and parallelism each launcher's variables give, without MPI.
func TestLauncherRank(t *testing.T) {
	for _, k := range append(append(append([]string(nil), launcherEnv...), launcherRankEnv...), launcherSizeEnv...) {
		t.Setenv(k, "")
	}
	cases := []struct {
		env      map[string]string
		rank     int
		parallel bool
	}{
		{map[string]string{}, 0, false},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "1"}, 1, true},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "2", "OMPI_COMM_WORLD_RANK": "0"}, 0, true},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_RANK": "0"}, 0, false},
		{map[string]string{"PMI_SIZE": "4", "PMI_RANK": "3"}, 3, true},
		{map[string]string{"PMIX_RANK": "2"}, 2, true},
		{map[string]string{"PMI_SIZE": "3"}, 0, true}, // no rank given: treated as the one that speaks
	}
	for _, c := range cases {
		unsetAll(t)
		for _, k := range append(launcherRankEnv, launcherSizeEnv...) {
			os.Unsetenv(k)
		}
		for k, v := range c.env {
			os.Setenv(k, v)
		}
		if rank, parallel := LauncherRank(); rank != c.rank || parallel != c.parallel {
			t.Errorf("%v: rank %d, parallel %v; want %d, %v", c.env, rank, parallel, c.rank, c.parallel)
		}
	}
}
