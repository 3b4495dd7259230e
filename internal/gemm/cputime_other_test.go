//go:build !unix

package gemm

// cpuSeconds is unavailable here; the per-CPU-second metric is left out.
func cpuSeconds() float64 { return 0 }
