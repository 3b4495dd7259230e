package dist

import (
	"strings"
	"testing"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// TestLocalRank: the first of OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID and
// LOCAL_RANK that is set wins; junk is an error naming the variable.
func TestLocalRank(t *testing.T) {
	for _, c := range []struct {
		env    map[string]string
		rank   int
		source string
		ok     bool
		err    string
	}{
		{env: nil},
		{env: map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "3"}, rank: 3, source: "OMPI_COMM_WORLD_LOCAL_RANK", ok: true},
		{env: map[string]string{"SLURM_LOCALID": "1", "LOCAL_RANK": "2"}, rank: 1, source: "SLURM_LOCALID", ok: true},
		{env: map[string]string{"LOCAL_RANK": "0"}, rank: 0, source: "LOCAL_RANK", ok: true},
		{env: map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "2", "SLURM_LOCALID": "5", "LOCAL_RANK": "7"}, rank: 2, source: "OMPI_COMM_WORLD_LOCAL_RANK", ok: true},
		{env: map[string]string{"LOCAL_RANK": " 4\n"}, rank: 4, source: "LOCAL_RANK", ok: true},
		{env: map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "x", "LOCAL_RANK": "1"}, source: "OMPI_COMM_WORLD_LOCAL_RANK", err: `OMPI_COMM_WORLD_LOCAL_RANK="x"`},
		{env: map[string]string{"SLURM_LOCALID": "-1"}, source: "SLURM_LOCALID", err: `SLURM_LOCALID="-1"`},
		{env: map[string]string{"LOCAL_RANK": ""}, source: "LOCAL_RANK", err: `LOCAL_RANK=""`},
		{env: map[string]string{"LOCAL_RANK": "1.5"}, source: "LOCAL_RANK", err: "not a local rank"},
	} {
		rank, source, ok, err := LocalRank(envOf(c.env))
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%v: error %v, want one with %q", c.env, err, c.err)
		case c.err == "" && err != nil:
			t.Errorf("%v: %v", c.env, err)
		case rank != c.rank || source != c.source || ok != c.ok:
			t.Errorf("%v: %d, %q, %v; want %d, %q, %v", c.env, rank, source, ok, c.rank, c.source, c.ok)
		}
	}
}

// TestDeviceForLocalRank: local rank r takes GPU r; one visible GPU serves
// every rank (CUDA_VISIBLE_DEVICES per rank); more ranks than GPUs is an error.
func TestDeviceForLocalRank(t *testing.T) {
	for _, c := range []struct {
		local, count, want int
		err                string
	}{
		{0, 1, 0, ""}, {0, 8, 0, ""}, {3, 8, 3, ""}, {7, 8, 7, ""},
		{5, 1, 0, ""},
		{2, 2, 0, "only 2 GPUs"}, {8, 8, 0, "only 8 GPUs"},
		{0, 0, 0, "no GPU"}, {-1, 4, 0, "local rank -1"},
	} {
		got, err := DeviceForLocalRank(c.local, c.count)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("local %d of %d GPUs: %v, %v; want an error with %q", c.local, c.count, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("local %d of %d GPUs: %v, %v; want %d", c.local, c.count, got, err, c.want)
		}
	}
}
