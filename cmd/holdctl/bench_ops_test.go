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
