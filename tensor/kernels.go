package tensor

import "holdgo/internal/isa"

// CPUKernels names the instruction set the CPU kernels use (HOLDGO_ISA forces one) and those this
// machine supports, best first.
func CPUKernels() (level string, supported []string) { return isa.Level(), isa.Levels() }
