package main

import (
	"errors"
	"strings"
	"testing"

	"holdgo/tensor"
)

// TestRankDevice: in a run of several ranks, --device cuda without an ordinal takes the GPU of the
// rank's local rank (OMPI_COMM_WORLD_LOCAL_RANK, then SLURM_LOCALID, then LOCAL_RANK) among those
// visible; one rank, an ordinal, the CPU or no local rank leave --device alone; junk in the
// environment and more local ranks than GPUs are errors. The GPU count is a function: no GPU needed.
func TestRankDevice(t *testing.T) {
	gpus := func(n int) func() (int, error) { return func() (int, error) { return n, nil } }
	noCount := func() (int, error) { return 0, errors.New("no CUDA in this build") }
	for _, c := range []struct {
		name  string
		ranks int
		env   map[string]string
		count func() (int, error)
		want  string
		err   string
	}{
		{"cuda", 4, map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "3"}, gpus(8), "cuda:3", ""},
		{"cuda", 4, map[string]string{"SLURM_LOCALID": "2", "LOCAL_RANK": "0"}, gpus(4), "cuda:2", ""},
		{"cuda", 2, map[string]string{"LOCAL_RANK": "1"}, gpus(2), "cuda:1", ""},
		{"cuda", 8, map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "5"}, gpus(1), "cuda:0", ""}, // CUDA_VISIBLE_DEVICES per rank
		{"cuda", 4, nil, gpus(8), "cuda", ""},
		{"cuda", 1, map[string]string{"LOCAL_RANK": "3"}, gpus(8), "cuda", ""},
		{"cuda:1", 4, map[string]string{"LOCAL_RANK": "3"}, gpus(8), "cuda:1", ""},
		{"cpu", 4, map[string]string{"LOCAL_RANK": "3"}, noCount, "cpu", ""},
		{"cuda", 4, map[string]string{"OMPI_COMM_WORLD_LOCAL_RANK": "4"}, gpus(4), "", "local rank 4 (OMPI_COMM_WORLD_LOCAL_RANK): dist: local rank 4 but only 4 GPUs"},
		{"cuda", 4, map[string]string{"SLURM_LOCALID": "one"}, gpus(4), "", `SLURM_LOCALID="one" is not a local rank`},
		{"cuda", 4, map[string]string{"LOCAL_RANK": "0"}, noCount, "", "no CUDA in this build"},
		{"cuda", 4, map[string]string{"LOCAL_RANK": "0"}, gpus(0), "", "no GPU visible"},
	} {
		lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
		got, err := rankDevice(c.name, c.ranks, lookup, c.count)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s on %d ranks, %v: %q, %v; want an error with %q", c.name, c.ranks, c.env, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s on %d ranks, %v: %q, %v; want %q", c.name, c.ranks, c.env, got, err, c.want)
		}
	}
}

// TestRankLine: the line a rank writes at start, on the CPU.
func TestRankLine(t *testing.T) {
	if got, want := rankLine(1, 4, "node2", tensor.CPU), "rank 1 of 4: host node2, device "+tensor.CPU.Name(); got != want {
		t.Errorf("rankLine: %q, want %q", got, want)
	}
}
