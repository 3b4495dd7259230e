package tensor_test

import (
	"fmt"
	"testing"

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
