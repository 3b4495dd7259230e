package gemm

import "holdgo/internal/isa"

// Instruction-set levels, best first: internal/isa chooses one at start-up
// for every SIMD package (gemm, vec); see Levels, SetISA and HOLDGO_ISA.
const (
	AVX512  = isa.AVX512  // AVX-512F + AVX-512DQ (amd64, not under noasm)
	AVX2    = isa.AVX2    // AVX2 + FMA3 (amd64, not under noasm)
	Generic = isa.Generic // plain Go, everywhere
)

// EnvISA names the environment variable read once at start-up: set to
// "avx512", "avx2" or "generic" it selects the level (as SetISA would).
const EnvISA = isa.EnvISA

// kernels lists the kernels this machine supports, best first, one per
// isa.Levels entry; it always ends with the generic one.
var kernels = withPackers(append(archKernels(), genericKernel))

// withPackers gives each kernel without its own packers the plain-Go ones.
func withPackers(ks []*kernel) []*kernel {
	for _, k := range ks {
		if k.packA == nil {
			k.packA = packA
		}
		if k.packB == nil {
			k.packB = packB
		}
	}
	return ks
}

// activeKernel is the kernel for the level isa has chosen.
func activeKernel() *kernel {
	level := isa.Level()
	for _, k := range kernels {
		if k.isa == level {
			return k
		}
	}
	return genericKernel
}

// Levels reports the instruction-set levels this machine and build support,
// best first; the last is always "generic".
func Levels() []string { return isa.Levels() }

// ISA reports the level Sgemm (and every other SIMD package) uses now.
func ISA() string { return isa.Level() }

// SetISA makes Sgemm (and every other SIMD package) use the given level and
// returns the previous one; see isa.Set.
func SetISA(level string) (prev string, err error) { return isa.Set(level) }
