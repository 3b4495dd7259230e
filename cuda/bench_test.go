//go:build cuda

package cuda

import "testing"

// BenchmarkKernels times every kernel family on the GPU with CUDA events, flushing L2 before each
// run: go test -tags cuda -run '^$' -bench Kernels ./cuda/  (or the test binary from
// 'go test -c -tags cuda ./cuda/' with -test.bench Kernels on a machine without Go).
// Metrics: GB/s of minimum DRAM traffic, % of the device's peak bandwidth, GFLOP/s for GEMM.
func BenchmarkKernels(b *testing.B) {
	dev := openGPU(b)
	timer := dev.be.(Timer)
	loads, err := benchWorkloads(dev, BenchOptions{}.withDefaults())
	if err != nil {
		b.Fatal(err)
	}
	for _, w := range loads {
		b.Run(w.name, func(b *testing.B) {
			if err := w.run(); err != nil {
				b.Fatal(err)
			}
			var total float64
			for range b.N {
				if err := timer.FlushL2(); err != nil {
					b.Fatal(err)
				}
				s, err := timer.Time(w.run)
				if err != nil {
					b.Fatal(err)
				}
				total += s
			}
			per := total / float64(b.N)
			b.ReportMetric(per*1e6, "device-µs/op")
			b.ReportMetric(w.bytes/per/1e9, "GB/s")
			if peak := timer.PeakBandwidth(); peak > 0 {
				b.ReportMetric(100*w.bytes/per/peak, "%peak")
			}
			if w.flops > 0 {
				b.ReportMetric(w.flops/per/1e9, "GFLOP/s")
			}
		})
	}
}
