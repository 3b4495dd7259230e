//go:build !linux

package parallel

// threadCPU reports that no per-thread CPU clock is read on this system: the
// governor then judges split loops by their time alone.
func threadCPU() int64 { return -1 }
