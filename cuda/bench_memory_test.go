package cuda

import "testing"

// BenchMemoryOf, which 'holdctl bench kernels' checks against the memory budget before anything is
// allocated, against what benchWorkloads really takes from the pool on the fake device: the uploads
// exactly (so that a tensor added to the workloads and not to benchSize.shapes fails here), and the
// uploads with every workload's scratch within the estimate.
func TestBenchMemory(t *testing.T) {
	for _, o := range []BenchOptions{
		{Elements: 1, GemmSize: 1},
		{Elements: 3, GemmSize: 3},
		{Elements: 17, GemmSize: 17},
		{Elements: 1000, GemmSize: 70},
		{Elements: 4097, GemmSize: 129},
		{Elements: 1 << 16, GemmSize: 256},
	} {
		want := BenchMemoryOf(o)
		dev := NewDevice(newFake())
		loads, err := benchWorkloads(dev, o.withDefaults())
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		if got := int64(dev.PoolStats().InUseBytes); got != want.Device-benchScratch {
			t.Errorf("%+v: the uploads take %d bytes of the pool, BenchMemoryOf says %d", o, got, want.Device-benchScratch)
		}
		for _, w := range loads {
			if err := w.run(); err != nil {
				t.Fatalf("%+v: %s: %v", o, w.name, err)
			}
		}
		st := dev.PoolStats()
		if held := int64(st.InUseBytes + st.CachedBytes); held > want.Device {
			t.Errorf("%+v: the workloads hold %d bytes of the pool, over BenchMemoryOf's %d", o, held, want.Device)
		}
	}
	// The defaults: 16 Mi elements and 4096² GEMMs take about 2 GiB (the shim's default run died of
	// Go's out-of-memory under ulimit -v 3 GiB before holdctl checked it); the host buffer is
	// bounded by twice the largest tensor, the ×2 FIR's output of 256 planes of 512².
	if d := BenchMemoryOf(BenchOptions{}); d.Device < 1<<30 || d.Host != 2*4*256*512*512 {
		t.Errorf("defaults: %+v", d)
	}
}
