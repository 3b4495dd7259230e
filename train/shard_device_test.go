//go:build cudashim || cuda

package train

import (
	"math"
	"sync"
	"testing"
	"unsafe"

	"holdgo/cuda"
	"holdgo/dist"
	"holdgo/hold"
	"holdgo/tensor"
)

// TestDataParallelDeviceMatchesOne: two device trainers (the host shim, or a GPU) joined by the
// in-process communicator, each with half of the batch, whose gradients go through host memory
// for the all-reduce, train like one device trainer with the whole batch; and like the CPU. The
// shim adds the two halves' weight gradients in another order than the whole batch's GEMM, so
// the agreement is float32 rounding, as on the CPU.
func TestDataParallelDeviceMatchesOne(t *testing.T) {
	const steps, batch, size = 8, 16, 2
	one := newToyRun(t, hold.KindHOLD, serialDevice(t), batch)
	cpu := newToyRun(t, hold.KindHOLD, tensor.CPU, batch)
	var want, wantCPU []float64
	for range steps {
		a, err := one.tr.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		b, err := cpu.tr.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		want, wantCPU = append(want, a.Loss), append(wantCPU, b.Loss)
	}
	comms, _ := dist.NewLocal(size)
	ranks := make([]toyRun, size)
	losses := make([][]float64, size)
	errs := make([]error, size)
	for r := range size {
		ranks[r] = newShardToyRun(t, r, size, batch)
		ranks[r].tr.SetComm(comms[r])
		if err := ranks[r].tr.SetDevice(serialDevice(t)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for range steps {
				st, err := ranks[r].tr.TrainStep()
				if err != nil {
					errs[r] = err
					return
				}
				losses[r] = append(losses[r], st.Loss)
			}
		}(r)
	}
	wg.Wait()
	for r := range size {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		worst := 0.0
		for i, l := range losses[r] {
			worst = max(worst, math.Abs(l-want[i])/want[i])
			if rel := math.Abs(l-wantCPU[i]) / wantCPU[i]; !(rel <= lossRelTol) {
				t.Errorf("rank %d step %d: loss %.9g, one process on the cpu %.9g", r, i+1, l, wantCPU[i])
			}
		}
		if !(worst <= 1e-5) {
			t.Errorf("rank %d: losses differ from one device trainer by up to %.3g relative", r, worst)
		}
		got, ref := ranks[r].state(t), one.state(t)
		for k, name := range []string{"parameters", "EMA weights"} {
			if e := nmse(got[k], ref[k]); !(e <= 1e-8) {
				t.Errorf("rank %d: %s NMSE %.3g against one device trainer", r, name, e)
			}
		}
		t.Logf("rank %d: worst loss difference %.3g against one device trainer, parameter NMSE %.3g", r, worst, nmse(got[0], ref[0]))
	}
	compareStates(t, "2 ranks on the device against one process on the cpu", ranks[0].state(t), cpu.state(t))
}

// newShardToyRun is newToyRun's trainer for rank r of size, on the CPU until SetDevice.
func newShardToyRun(t *testing.T, r, size, batch int) toyRun {
	t.Helper()
	sde, src, net, d := toyModel(t, hold.KindHOLD)
	first, local, err := dist.Split(batch, r, size)
	if err != nil {
		t.Fatal(err)
	}
	loss, err := ShardScoreLoss(sde, net, src.Sample, Shard{Global: batch, First: first, Len: local}, d, TimeSampling{Scheme: TimesUniform})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{Steps: 100, Batch: batch, LR: 1e-3, Warmup: 10, GradClip: 1, EMA: 0.999, Seed: 5}, net.Params, loss)
	if err != nil {
		t.Fatal(err)
	}
	return toyRun{tr, net}
}

// serialBackend runs one call at a time over all its instances: the host shim's fibers are not
// safe for concurrent launches from two goroutines (the ranks of the in-process communicator).
type serialBackend struct{ cuda.Backend }

var serialMu sync.Mutex

func serialDevice(t *testing.T) *cuda.Device { return cuda.NewDevice(serialBackend{testBackend(t)}) }

func (b serialBackend) Alloc(n int) (uintptr, error) {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.Alloc(n)
}
func (b serialBackend) Free(p uintptr) error {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.Free(p)
}
func (b serialBackend) Zero(p uintptr, n int) error {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.Zero(p, n)
}
func (b serialBackend) CopyHtoD(dst uintptr, src unsafe.Pointer, n int) error {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.CopyHtoD(dst, src, n)
}
func (b serialBackend) CopyDtoH(dst unsafe.Pointer, src uintptr, n int) error {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.CopyDtoH(dst, src, n)
}
func (b serialBackend) CopyDtoD(dst, src uintptr, n int) error {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.CopyDtoD(dst, src, n)
}
func (b serialBackend) Launch(name string, grid, block [3]int, shared int, args []uint64) error {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.Launch(name, grid, block, shared, args)
}
func (b serialBackend) Sync() error {
	serialMu.Lock()
	defer serialMu.Unlock()
	return b.Backend.Sync()
}
