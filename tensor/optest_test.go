package tensor_test

import (
	"fmt"
	"testing"

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
