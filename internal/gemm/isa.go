package gemm

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Instruction-set levels, best first. Which of them the machine (and the
// build) supports is decided once at start-up; see Levels.
const (
	AVX512  = "avx512"  // AVX-512F + AVX-512DQ (amd64, not under noasm)
	AVX2    = "avx2"    // AVX2 + FMA3 (amd64, not under noasm)
	Generic = "generic" // plain Go, everywhere
)

// EnvISA names the environment variable read once at start-up: set to
// "avx512", "avx2" or "generic" it selects the level Sgemm uses (as SetISA would),
// so one AVX-512 machine can run every path. An unknown or unsupported value
// is reported on stderr and ignored.
const EnvISA = "HOLDGO_ISA"

// kernels lists the kernels this machine supports, best first; it always
// ends with the generic one.
var kernels = append(archKernels(), genericKernel)

// active is the kernel Sgemm uses.
var active atomic.Pointer[kernel]

func init() {
	active.Store(kernels[0])
	if env := strings.TrimSpace(os.Getenv(EnvISA)); env != "" {
		if _, err := SetISA(env); err != nil {
			fmt.Fprintf(os.Stderr, "holdgo/gemm: ignoring %s=%q: %v\n", EnvISA, env, err)
		}
	}
}

// Levels reports the instruction-set levels this machine and build support,
// best first; the last is always "generic".
func Levels() []string {
	out := make([]string, len(kernels))
	for i, k := range kernels {
		out[i] = k.isa
	}
	return out
}

// ISA reports the level Sgemm uses now.
func ISA() string { return active.Load().isa }

// SetISA makes Sgemm use the given level and returns the previous one. It
// fails, changing nothing, for a level this machine or build does not support.
// It is meant for tests and benchmarks: calls already running keep the kernel
// they started with.
func SetISA(level string) (prev string, err error) {
	for _, k := range kernels {
		if k.isa == level {
			return active.Swap(k).isa, nil
		}
	}
	return ISA(), fmt.Errorf("gemm: instruction set %q not supported here (have %v)", level, Levels())
}
