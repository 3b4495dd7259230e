// Package isa chooses, once at start-up, the instruction-set level that the
// SIMD kernels (internal/gemm, internal/vec) run: the best one the CPU and the
// build support, unless HOLDGO_ISA names another. It is one switch for all of
// them, so a test or benchmark that sets a level moves every package at once.
package isa

import (
	"fmt"
	"os"
	"strings"
	"sync/atomic"
)

// Instruction-set levels, best first.
const (
	AVX512  = "avx512"  // AVX-512F + AVX-512DQ (amd64, not under noasm)
	AVX2    = "avx2"    // AVX2 + FMA3 (amd64, not under noasm)
	Generic = "generic" // plain Go, everywhere
)

// EnvISA names the environment variable read once at start-up: set to
// "avx512", "avx2" or "generic" it selects the level (as Set would), so one
// AVX-512 machine can run every path. An unknown or unsupported value is
// reported on stderr and ignored.
const EnvISA = "HOLDGO_ISA"

// levels lists the supported levels, best first, ending with Generic.
var levels = append(archLevels(), Generic)

// active indexes levels.
var active atomic.Int32

func init() {
	if env := strings.TrimSpace(os.Getenv(EnvISA)); env != "" {
		if _, err := Set(env); err != nil {
			fmt.Fprintf(os.Stderr, "holdgo/isa: ignoring %s=%q: %v\n", EnvISA, env, err)
		}
	}
}

// Levels reports the levels this machine and build support, best first; the
// last is always Generic.
func Levels() []string { return append([]string(nil), levels...) }

// Supported reports whether level is one of Levels.
func Supported(level string) bool {
	for _, l := range levels {
		if l == level {
			return true
		}
	}
	return false
}

// Level reports the level the kernels use now.
func Level() string { return levels[active.Load()] }

// Set makes the kernels use the given level and returns the previous one. It
// fails, changing nothing, for a level this machine or build does not
// support. It is meant for tests and benchmarks: calls already running keep
// the kernel they started with.
func Set(level string) (prev string, err error) {
	for i, l := range levels {
		if l == level {
			return levels[active.Swap(int32(i))], nil
		}
	}
	return Level(), fmt.Errorf("instruction set %q not supported here (have %v)", level, levels)
}
