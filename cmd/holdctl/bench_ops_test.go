package main

import (
	"strings"
	"testing"

	"holdgo/tensor"
)

// 'bench ops' prints one matrix row per op, all passing on the CPU device; a bad device or
// tolerance is a usage error (exit 2).
func TestCLIBenchOps(t *testing.T) {
	r := mustRun(t, "bench", "ops", "--device", "cpu")
	for _, k := range tensor.Ops() {
		if !strings.Contains(r.stdout, "| "+k.String()+" | ok |") {
			t.Errorf("matrix lacks a passing row for %v:\n%s", k, r.stdout)
		}
	}
	for _, args := range [][]string{{"--device", "tpu"}, {"--tol", "-1"}} {
		if r := holdctl(t, append([]string{"bench", "ops"}, args...)...); r.code != 2 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("bench ops %v: want exit 2 with one line, got %s", args, r)
		}
	}
}

// 'bench ops --perf' prints a timed row per matching case; no match or a bad --min-time is a usage
// error.
func TestCLIBenchOpsPerf(t *testing.T) {
	r := mustRun(t, "bench", "ops", "--perf", "--filter", "MatMul[3 4]", "--min-time", "1ms")
	if !strings.Contains(r.stdout, "| op | case | cpu µs | GFLOP/s | GB/s |") || !strings.Contains(r.stdout, "| MatMul | MatMul[3 4][4 5]/falsefalse/0 | ") {
		t.Errorf("perf table:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"--filter", "no such case"}, {"--min-time", "0s"}} {
		if r := holdctl(t, append([]string{"bench", "ops", "--perf"}, args...)...); r.code != 2 {
			t.Errorf("bench ops --perf %v: want exit 2, got %s", args, r)
		}
	}
}
