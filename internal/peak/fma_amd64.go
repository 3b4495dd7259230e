//go:build !noasm

package peak

import "holdgo/internal/isa"

// fmaAVX512 runs 16 chains of 16-lane FMAs for iters iterations and returns
// lane 0 of their sum (fma_amd64.s).
//
//go:noescape
func fmaAVX512(iters int) float32

// fmaAVX2 runs 12 chains of 8-lane FMAs for iters iterations and returns
// lane 0 of their sum (fma_amd64.s).
//
//go:noescape
func fmaAVX2(iters int) float32

// archLoops lists the assembly loops.
var archLoops = []loop{
	{level: isa.AVX512, chains: 16, flopsPerIter: 16 * 16 * 2, run: fmaAVX512},
	{level: isa.AVX2, chains: 12, flopsPerIter: 12 * 8 * 2, run: fmaAVX2},
}
