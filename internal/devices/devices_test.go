package devices

import (
	"errors"
	"strings"
	"testing"

	"holdgo/cuda"
	"holdgo/dist"
	"holdgo/internal/budget"
	"holdgo/tensor"
	"holdgo/train"
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
		got, err := ForRank(c.name, c.ranks, lookup, c.count)
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
	if got, want := RankLine(1, 4, "node2", tensor.CPU), "rank 1 of 4: host node2, device "+tensor.CPU.Name(); got != want {
		t.Errorf("RankLine: %q, want %q", got, want)
	}
}

// TestOpen: the host devices by name, an unknown name refused with the names it takes.
func TestOpen(t *testing.T) {
	for name, want := range map[string]tensor.Device{"": tensor.CPU, "cpu": tensor.CPU, "reference": tensor.Reference} {
		if dev, err := Open(name); err != nil || dev != want {
			t.Errorf("Open(%q): %v, %v; want %s", name, dev, err, want.Name())
		}
	}
	if _, err := Open("tpu"); err == nil || !strings.Contains(err.Error(), "want cpu, reference, cuda or cuda:N") {
		t.Errorf("Open(tpu): %v", err)
	}
}

// TestCheckDist: host passes, an unknown mode and nccl off a CUDA device are refused naming the flag.
func TestCheckDist(t *testing.T) {
	for _, c := range []struct{ mode, device, err string }{
		{"", "cpu", ""}, {"host", "cuda", ""},
		{"mpi", "cpu", `--dist "mpi": want host or nccl`},
		{"nccl", "cpu", "it needs --device cuda (got --device cpu)"},
		{"nccl", "cuda:1", "--dist nccl: "}, // no NCCL in a build without -tags cuda
	} {
		err := CheckDist(c.mode, c.device)
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("CheckDist(%q, %q): %v; want %q", c.mode, c.device, err, c.err)
		}
	}
}

// TestDeviceComm: --dist host reduces through the host (no engine); nccl's engine refuses a device
// that is no GPU, and in a build without -tags cuda has no NCCL.
func TestDeviceComm(t *testing.T) {
	if DeviceComm("host") != nil || DeviceComm("") != nil {
		t.Error("--dist host made a device engine")
	}
	mk := DeviceComm("nccl")
	if mk == nil {
		t.Fatal("--dist nccl made no engine factory")
	}
	if _, _, err := mk(tensor.CPU, dist.Single{}, train.DefaultRunConfig()); err == nil || !strings.Contains(err.Error(), "needs --device cuda") {
		t.Errorf("nccl on the CPU: %v", err)
	}
}

// TestKernelMemory: a kernel benchmark over the budget is refused before anything is allocated,
// naming both size flags, as bad input (budget.ErrExceeded); on the host shim the device's memory
// counts too.
func TestKernelMemory(t *testing.T) {
	defer budget.SetLimit(budget.Limit())
	budget.SetLimit(256 << 20)
	small := cuda.BenchOptions{Elements: 1 << 10, GemmSize: 16, Reps: 1}
	if err := checkKernelMemory(small, true); err != nil {
		t.Errorf("a small run: %v", err)
	}
	big := cuda.BenchOptions{Elements: 1 << 30, GemmSize: 16, Reps: 1}
	for _, onHost := range []bool{false, true} {
		err := checkKernelMemory(big, onHost)
		if !errors.Is(err, budget.ErrExceeded) || !strings.Contains(err.Error(), "--elements 1073741824 --gemm 16") {
			t.Errorf("onHost %v: %v; want budget.ErrExceeded naming the flags", onHost, err)
		}
	}
}

// Open refuses the recording device, which only bench train takes, naming it.
func TestOpenRefusesRecord(t *testing.T) {
	if _, err := Open(Record); err == nil || !strings.Contains(err.Error(), "only holdctl bench train") {
		t.Errorf("Open(%q): %v", Record, err)
	}
}
