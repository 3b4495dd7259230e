// Package hugepage asks the operating system to back large float32 buffers
// with transparent huge pages (2 MiB on x86-64), as numpy does for its
// arrays of 4 MiB and more.
//
// A product that reads a matrix row by row with a long stride (the GEMM's
// packing of A and B) touches a new 4 KiB page every row; on huge pages the
// same rows need a five-hundredth of the TLB entries, and the hardware
// prefetchers are not stopped at every 4 KiB boundary. On the Intel VM of
// docs/bench.md, one AVX2 thread, holdctl bench gemm with its inputs from
// Make against plain make (9 interleaved rounds, GFLOP/s): 1024³ 103.7 →
// 105.1, 32768×576·576×64 97.0 → 102.8, 8192×1152·1152×128 107.1 → 109.7;
// ncsnpp-small's forward pass 1–2 % faster with host tensors and im2col
// scratch from here.
//
// The advice only applies where the kernel allows it
// (/sys/kernel/mm/transparent_hugepage/enabled set to "always" or
// "madvise"); elsewhere, and on systems without madvise, Advise does
// nothing. It never changes the contents of the buffer. HOLDGO_HUGEPAGES=off
// turns it off (for a machine where the kernel's compaction on a huge-page
// fault stalls more than the pages save).
package hugepage

import "os"

// enabled is false when HOLDGO_HUGEPAGES=off (read once, at start-up).
var enabled = os.Getenv("HOLDGO_HUGEPAGES") != "off"

// MinBytes is the size from which Make and Advise ask for huge pages
// (numpy's threshold).
const MinBytes = 4 << 20

// Make returns a zeroed slice of n float32s, advised for huge pages when
// it is at least MinBytes long.
func Make(n int) []float32 {
	s := make([]float32, n)
	Advise(s)
	return s
}

// Advise asks for huge pages under s when s is at least MinBytes long. It
// works best before the memory is first written (Make): pages already
// touched are only merged later, in the background, by the kernel.
func Advise(s []float32) {
	if !enabled || 4*len(s) < MinBytes {
		return
	}
	advise(s)
}
