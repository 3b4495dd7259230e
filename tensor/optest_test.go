package tensor_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"holdgo/autograd"
	"holdgo/internal/isa"
	"holdgo/internal/parallel"
	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// The backend table (package optest) on the CPU device at every instruction-set level (the SIMD
// kernels and the GEMM's panel width, which the convolutions' im2col writes, differ between them)
// and thread count, against the Reference device.
func TestOpsAgainstReference(t *testing.T) {
	for _, level := range isa.Levels() {
		prevISA, _ := isa.Set(level)
		for _, threads := range []int{1, 2} {
			prev := parallel.SetThreads(threads)
			optest.Check(t, tensor.CPU, fmt.Sprintf("%s, threads=%d", level, threads), 1e-10)
			parallel.SetThreads(prev)
		}
		isa.Set(prevISA)
	}
}

// Every op of the list has a case, and the Reference device agrees with itself exactly.
func TestTableCoversOps(t *testing.T) {
	seen := map[tensor.OpKind]int{}
	for _, c := range optest.Cases() {
		seen[c.Kind]++
	}
	for _, k := range tensor.Ops() {
		if seen[k] == 0 {
			t.Errorf("op %v has no case in the backend table", k)
		}
	}
	for _, r := range optest.Matrix(tensor.Reference, 0) {
		if r.Passed != r.Cases {
			t.Errorf("Reference against itself: %v: %s", r.Kind, r.FirstError)
		}
	}
}

// The gradient table has a case for every op the tape differentiates and for nothing else.
func TestGradTableCoversOps(t *testing.T) {
	seen := map[string]int{}
	for _, c := range optest.GradCases() {
		seen[c.Op]++
		if len(c.Inputs) == 0 || c.F == nil {
			t.Errorf("gradient case %s has no inputs or no function", c.Name)
		}
	}
	for _, op := range autograd.Differentiable {
		if seen[op] == 0 {
			t.Errorf("differentiable op %s has no gradient case", op)
		}
		delete(seen, op)
	}
	for op := range seen {
		t.Errorf("gradient cases for %s, which autograd.Differentiable does not list", op)
	}
}

// The gradient mode on the CPU device at every instruction-set level and thread count (the default
// level and the Reference run in autograd's TestGradientsTight).
func TestGradientsEveryISA(t *testing.T) {
	if testing.Short() {
		t.Skip("every gradient case at every level")
	}
	for _, level := range isa.Levels() {
		prevISA, _ := isa.Set(level)
		for _, threads := range []int{1, 2} {
			prev := parallel.SetThreads(threads)
			optest.CheckGrad(t, tensor.CPU, fmt.Sprintf("%s, threads=%d", level, threads))
			parallel.SetThreads(prev)
		}
		isa.Set(prevISA)
	}
}

// The performance mode's counts for two cases, by hand: MatMul (130×129)·(129×67) is 2·130·67·129
// FLOPs over (130·129 + 129·67 + 130·67)·4 bytes; Conv2d with n 2, c 3, 5×7, o 4, 3×3, stride 1, pad 1
// is 2·(2·4·5·7)·(3·3·3) FLOPs over (2·3·5·7 + 4·3·3·3 + 2·4·5·7)·4 bytes. The times are only
// required to be positive (no timed assertion).
func TestPerfCounts(t *testing.T) {
	want := map[string][2]int64{
		"MatMul[130 129][129 67]/falsefalse/0":           {2 * 130 * 67 * 129, (130*129 + 129*67 + 130*67) * 4},
		"Conv2d{n:2 c:3 h:5 w:7 o:4 k:3 stride:1 pad:1}": {2 * (2 * 4 * 5 * 7) * 27, (2*3*5*7 + 4*27 + 2*4*5*7) * 4},
	}
	found := 0
	for _, c := range optest.Cases() {
		w, ok := want[c.Name]
		if !ok {
			continue
		}
		found++
		r := optest.Perf(tensor.CPU, c, time.Millisecond)
		if r.Err != nil {
			t.Fatalf("%s: %v", c.Name, r.Err)
		}
		if r.FLOPs != w[0] || r.Bytes != w[1] {
			t.Errorf("%s: %d FLOPs and %d bytes, want %d and %d", c.Name, r.FLOPs, r.Bytes, w[0], w[1])
		}
		if !(r.Seconds > 0) || !(r.GFLOPS > 0) || !(r.GBps > 0) {
			t.Errorf("%s: %v s, %v GFLOP/s, %v GB/s", c.Name, r.Seconds, r.GFLOPS, r.GBps)
		}
	}
	if found != len(want) {
		t.Fatalf("found %d of the %d cases: the table's names changed", found, len(want))
	}
	var b strings.Builder
	optest.WritePerf(&b, "cpu", optest.PerfTable(tensor.CPU, "Exp[17]", time.Millisecond))
	if !strings.Contains(b.String(), "| Exp | Exp[17] |") {
		t.Errorf("perf table:\n%s", b.String())
	}
}
