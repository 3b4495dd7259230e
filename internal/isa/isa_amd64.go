//go:build !noasm

package isa

import "github.com/klauspost/cpuid/v2"

// archLevels lists the assembly levels this CPU runs, best first.
func archLevels() []string {
	var out []string
	if cpuid.CPU.Supports(cpuid.AVX512F, cpuid.AVX512DQ) {
		out = append(out, AVX512)
	}
	if cpuid.CPU.Supports(cpuid.AVX2, cpuid.FMA3) {
		out = append(out, AVX2)
	}
	return out
}
