package bench

import (
	"errors"
	"io"
	"strings"
	"testing"

	"holdgo/internal/budget"
	"holdgo/internal/cliconf"
	"holdgo/internal/parallel"
)

// TestRunRefusals: each run refuses bad settings before it measures anything, as an *InputError that
// names the flag: sizes over the memory budget, an unknown ISA or preset, --perf's flags without
// --perf, a filter that names no case.
func TestRunRefusals(t *testing.T) {
	defer budget.SetLimit(budget.Limit())
	budget.SetLimit(64 << 20)
	never := func(string) bool { return false }
	for _, c := range []struct {
		name string
		run  func() error
		want string
	}{
		{"gemm over the budget", func() error {
			return RunGemm(GemmRun{M: 65536, K: 65536, N: 65536, Threads: 1, Repeats: 1}, io.Discard)
		}, "--m/--k/--n"},
		{"gemm unknown ISA", func() error {
			return RunGemm(GemmRun{M: 2, K: 2, N: 2, Threads: 1, Repeats: 1, ISA: "sse9"}, io.Discard)
		}, "bench gemm: "},
		{"triad over the budget", func() error { return RunTriad(TriadRun{N: 1 << 30, Threads: 1, Repeats: 1}, io.Discard) }, "--n"},
		{"mlp over the budget", func() error { return RunMLP(MLPRun{Batch: 1 << 20, Hidden: 16384, Threads: 1, Repeats: 1}, io.Discard) }, "--batch/--hidden"},
		{"peak over the budget", func() error { return RunPeak(PeakRun{TriadN: 1 << 31, Repeats: 1}, io.Discard) }, "--triad-n"},
		{"ncsnpp unknown preset", func() error {
			return RunNCSNpp(NCSNppRun{Models: "ncsnpp-huge", Repeats: 1, Rounds: 1}, io.Discard, io.Discard)
		}, "--models: "},
		{"ncsnpp over the budget", func() error {
			return RunNCSNpp(NCSNppRun{Models: "ncsnpp-small", Repeats: 1, Rounds: 1}, io.Discard, io.Discard)
		}, "a training step of ncsnpp-small"},
		{"ncsnpp bad ISA list", func() error {
			defer budget.SetLimit(budget.Limit())
			budget.SetLimit(1 << 40)
			return RunNCSNpp(NCSNppRun{Models: "ncsnpp-small", Repeats: 1, Rounds: 1, OneDNNISA: "AVX 2"}, io.Discard, io.Discard)
		}, "--onednn-isa"},
		{"ops filter without perf", func() error {
			return RunOps(OpsRun{Device: "reference", Filter: "MatMul"}, func(f string) bool { return f == "filter" }, io.Discard)
		}, "--filter MatMul applies to --perf only"},
		{"ops unknown device", func() error { return RunOps(OpsRun{Device: "tpu"}, never, io.Discard) }, "bench ops: unknown device"},
		{"ops filter names no case", func() error {
			return RunOps(OpsRun{Device: "reference", Perf: true, Filter: "NoSuchOp"}, never, io.Discard)
		}, "no case name contains"},
		{"model info unknown preset", func() error { return RunModelInfo(ModelInfoRun{Model: "ncsnpp-huge", InChannels: 9}, io.Discard) }, "ncsnpp-huge"},
		{"model info step over the budget", func() error {
			return RunModelInfo(ModelInfoRun{Model: "ncsnpp-cifar10", InChannels: 9, Batch: 4096}, io.Discard)
		}, "--batch"},
		{"train unknown device", func() error { return RunTrain(TrainRun{Model: "mlp", SDE: "hold", Steps: 1}, "tpu", io.Discard) }, "unknown device"},
	} {
		err := c.run()
		var ie *InputError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an *InputError containing %q", c.name, err, c.want)
		}
	}
}

// TestRunTriadThreads: a run on its own thread count prints its report and gives the worker pool back
// as it found it.
func TestRunTriadThreads(t *testing.T) {
	defer parallel.SetThreads(parallel.SetThreads(3))
	var sb strings.Builder
	if err := RunTriad(TriadRun{N: 1000, Threads: 1, Repeats: 1}, &sb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(sb.String(), "1000") || parallel.Threads() != 3 {
		t.Errorf("report %q, %d threads after the run; want the size and 3", sb.String(), parallel.Threads())
	}
}

// TestRunBounds: the configurations' tags bound their sizes where they are declared.
func TestRunBounds(t *testing.T) {
	for _, cfg := range []any{GemmRun{M: 65537, K: 1, N: 1, Threads: 1, Repeats: 1}, TriadRun{N: 0, Threads: 1, Repeats: 1},
		OpsRun{Tol: -1}, TrainRun{Steps: 1, Channels: 65, Batch: 0}} {
		if err := cliconf.Check(cfg); err == nil {
			t.Errorf("%+v: accepted", cfg)
		}
	}
}
