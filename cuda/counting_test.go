package cuda

import (
	"testing"

	"holdgo/tensor"
)

// TestCountingKeepsCapabilities: the counting wrapper keeps its backend's vendor GEMM and pinned
// uploads (bench train --device cuda counts the step a plain run issues): on the recorder (both),
// a staged upload goes through CopyHtoDAsync, counted as an H→D copy that is no host sync, and
// its buffer's reuse as a fence wait.
func TestCountingKeepsCapabilities(t *testing.T) {
	rec, _ := NewRecordingDevice()
	dev, counting := NewCountingDevice(rec.Backend())
	if _, ok := dev.be.(Gemmer); !ok || dev.gemm == nil {
		t.Error("the counting device lost the vendor GEMM")
	}
	if _, ok := dev.be.(AsyncUploader); !ok {
		t.Fatal("the counting device lost the pinned uploads")
	}
	dst := tensor.New(dev, 4)
	st, err := dev.NewStager(dst)
	if err != nil {
		t.Fatal(err)
	}
	before := counting.Counters()
	for range stagerBuffers + 1 { // the last Host reuses the first buffer: one fence wait
		if _, err := st.Host(); err != nil {
			t.Fatal(err)
		}
		if err := st.Upload(); err != nil {
			t.Fatal(err)
		}
	}
	c := counting.Counters().Sub(before)
	if c.HtoD != stagerBuffers+1 || c.AsyncHtoD != stagerBuffers+1 || c.HtoDBytes != 16*(stagerBuffers+1) || c.HostSyncs() != 0 || c.FenceWaits != 1 {
		t.Errorf("%d staged uploads: %+v", stagerBuffers+1, c)
	}
	// Without the capability the wrapper has none either.
	plain, _ := NewCountingDevice(newFake())
	if _, ok := plain.be.(AsyncUploader); ok {
		t.Error("a counting device over a backend without pinned uploads claims them")
	}
}
