package cuda

import (
	"errors"
	"slices"
	"testing"

	"holdgo/tensor"
)

// TestStagerRecord: a stager on the recording device uploads what the host wrote, in one H→D
// copy each that is not a host synchronisation; Host counts a fence Wait only when the recorder's
// model says the copy may still be queued (fewer than recordQueueDepth operations since it, no
// host synchronisation since it); Upload without Host fails; closing it frees its three pinned
// buffers (cuMemFreeHost synchronises the device: 3 host synchronisations).
func TestStagerRecord(t *testing.T) {
	dev, rec := NewRecordingDevice()
	dst := tensor.New(dev, 5)
	st, err := dev.NewStager(dst)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Upload(); err == nil {
		t.Error("Upload without Host succeeded")
	}
	syncs := func() int { return rec.Stats().HostSyncs }
	upload := func(v float32) {
		t.Helper()
		h, err := st.Host()
		if err != nil {
			t.Fatal(err)
		}
		for i := range h {
			h[i] = v + float32(i)
		}
		if err := st.Upload(); err != nil {
			t.Fatal(err)
		}
	}
	upload(10) // buffer 0
	upload(20) // buffer 1
	upload(25) // buffer 2
	if s := rec.Stats(); s.HostSyncs != 0 || s.HtoD != 3 || s.HtoDBytes != 60 {
		t.Fatalf("three uploads: %d host synchronisations (%v), %d H→D copies of %d bytes", s.HostSyncs, s.HostSyncSources, s.HtoD, s.HtoDBytes)
	}
	// Buffer 0 again, right after its copy: the wait counts (attributed past package cuda: to the
	// test runner).
	upload(30)
	if s := rec.Stats(); s.HostSyncs != 1 || s.HostSyncSources["fence Wait ← testing.tRunner"] != 1 {
		t.Fatalf("reuse right after the copy: %d host synchronisations (%v), want 1 fence Wait", s.HostSyncs, s.HostSyncSources)
	}
	// That wait passed every earlier fence (buffer 1's too): no wait.
	upload(40)
	if n := syncs(); n != 1 {
		t.Errorf("buffer 1 after a host synchronisation: %d host synchronisations, want still 1", n)
	}
	// A step's worth of device work after buffer 0's copy: its fence is passed.
	for range recordQueueDepth {
		tensor.Fill(dst, 0)
	}
	upload(50)
	if n := syncs(); n != 1 {
		t.Errorf("reuse %d operations after the copy: %d host synchronisations, want still 1", recordQueueDepth, n)
	}
	got := make([]float32, 5)
	if err := dst.Buffer().Read(got); err != nil {
		t.Fatal(err)
	}
	if want := []float32{50, 51, 52, 53, 54}; !slices.Equal(got, want) {
		t.Errorf("the tensor holds %v after the last upload, want %v", got, want)
	}
	before := syncs()
	if err := st.(*stagerHandle).close(); err != nil {
		t.Fatal(err)
	}
	if s := rec.Stats(); s.HostSyncs-before != stagerBuffers || s.HostSyncSources["FreePinned ← testing.tRunner"] != stagerBuffers || len(rec.pinned) != 0 {
		t.Errorf("close: %d host synchronisations (%v), %d pinned buffers left", s.HostSyncs-before, s.HostSyncSources, len(rec.pinned))
	}
}

// A stager of an empty tensor uploads nothing; a backend without AsyncUploader has none
// (tensor.ErrUnsupported, so that train falls back to Write).
func TestStagerEdges(t *testing.T) {
	dev, rec := NewRecordingDevice()
	st, err := dev.NewStager(tensor.New(dev, 0))
	if err != nil {
		t.Fatal(err)
	}
	if h, err := st.Host(); err != nil || len(h) != 0 {
		t.Errorf("empty stager: Host %v, %v", h, err)
	}
	if err := st.Upload(); err != nil {
		t.Error(err)
	}
	if s := rec.Stats(); s.HtoD != 0 || len(rec.pinned) != 0 {
		t.Errorf("empty stager: %d copies, %d pinned buffers", s.HtoD, len(rec.pinned))
	}
	fake := NewDevice(newFake())
	if _, err := fake.NewStager(tensor.New(fake, 3)); !errors.Is(err, tensor.ErrUnsupported) {
		t.Errorf("stager on a backend without pinned memory: %v, want tensor.ErrUnsupported", err)
	}
	if _, err := dev.NewStager(tensor.New(fake, 3)); err == nil {
		t.Error("a stager for another device's tensor")
	}
}

// checkStagerSum runs five uploads through a stager on dev, each followed by a kernel that adds the
// tensor into a sum: each upload must reach the tensor in order with the kernels around it (on a
// GPU the host rewrites a buffer while the other's copy may still be queued).
func checkStagerSum(t *testing.T, dev *Device) {
	dst := tensor.New(dev, 7)
	st, err := dev.NewStager(dst)
	if err != nil {
		t.Fatal(err)
	}
	sum := tensor.New(dev, 7)
	want := make([]float32, 7)
	for step := range 5 {
		h, err := st.Host()
		if err != nil {
			t.Fatal(err)
		}
		for i := range h {
			h[i] = float32(10*step + i)
			want[i] += h[i]
		}
		if err := st.Upload(); err != nil {
			t.Fatal(err)
		}
		tensor.Add(sum, sum, dst)
	}
	got := make([]float32, 7)
	if err := sum.Buffer().Read(got); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("sum of the uploads %v, want %v", got, want)
	}
	if err := st.(*stagerHandle).close(); err != nil {
		t.Fatal(err)
	}
}
