package train

import (
	"math"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"holdgo/checkpoint"
	"holdgo/dist"
	"holdgo/tensor"
)

// A checkpoint holds the global state (parameters, Adam, EMA, random stream,
// step), so a run reduced in device memory resumes on another number of
// ranks: c trained `first` steps on `from` ranks, saved by rank 0, then
// restored on each of `to` ranks and trained `second` steps more, equals
// one trainer run for first+second steps.

// trainDeviceRanks trains ranks (joined by the in-process device
// communicator when there are several) for steps steps and returns each
// rank's losses.
func trainDeviceRanks(t *testing.T, c deviceCommCase, ranks []*Trainer, steps int, newDev func() tensor.Device) [][]float64 {
	t.Helper()
	size := len(ranks)
	if size > 1 {
		comms, err := dist.NewLocalDevice(size)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			for _, cm := range comms {
				_ = cm.Close()
			}
		}()
		for r, tr := range ranks {
			tr.SetDeviceComm(comms[r], c.bucketBytes)
		}
	}
	for _, tr := range ranks {
		if err := tr.SetDevice(newDev()); err != nil {
			t.Fatal(err)
		}
	}
	losses := make([][]float64, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r, tr := range ranks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range steps {
				st, err := tr.TrainStep()
				if err != nil {
					errs[r] = err
					return
				}
				losses[r] = append(losses[r], st.Loss)
			}
		}()
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d of %d: %v", r, size, err)
		}
	}
	if buckets, _, _ := ranks[0].Buckets(); size > 1 && len(buckets) < 2 {
		t.Fatalf("%d ranks: %d buckets, want the bucketed reduction", size, len(buckets))
	}
	return losses
}

// resumeOtherRanks runs c for first steps on from ranks, checkpoints, and
// resumes on each count of to for second steps, comparing with one trainer.
func resumeOtherRanks(t *testing.T, c deviceCommCase, first, second, from int, to []int, newDev func() tensor.Device) {
	t.Helper()
	one := c.build(t, 0, 1)
	want := trainDeviceRanks(t, c, []*Trainer{one}, first+second, newDev)[0]
	ref := one.hostState(t)
	check := func(stage string, losses [][]float64, offset int) {
		t.Helper()
		worst := 0.0
		for r := range losses {
			if len(losses[r]) == 0 {
				t.Fatalf("%s: rank %d took no step", stage, r)
			}
			for i, l := range losses[r] {
				worst = max(worst, math.Abs(l-want[offset+i])/want[offset+i])
			}
		}
		if !(worst <= 2.5e-6) {
			t.Errorf("%s: losses differ from one trainer's by up to %.3g relative (limit 2.5e-6)", stage, worst)
		}
		t.Logf("%s: worst loss difference %.3g", stage, worst)
	}
	ranks := make([]*Trainer, from)
	for r := range from {
		ranks[r] = c.build(t, r, from)
	}
	check(c.name+", first steps on "+strconv.Itoa(from)+" ranks", trainDeviceRanks(t, c, ranks, first, newDev), 0)
	path := filepath.Join(t.TempDir(), CheckpointFile)
	if err := ranks[0].Save(path, map[string]string{"ranks": strconv.Itoa(from)}); err != nil {
		t.Fatal(err)
	}
	for _, size := range to {
		stage := c.name + ", resumed on " + strconv.Itoa(size) + " rank(s)"
		f, err := checkpoint.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		ranks := make([]*Trainer, size)
		for r := range size {
			ranks[r] = c.build(t, r, size)
			if err := ranks[r].Restore(f); err != nil {
				t.Fatal(err)
			}
			if ranks[r].Step != first {
				t.Fatalf("%s: rank %d restored step %d, want %d", stage, r, ranks[r].Step, first)
			}
		}
		check(stage, trainDeviceRanks(t, c, ranks, second, newDev), first)
		for r, tr := range ranks {
			got := tr.hostState(t)
			if p, e := nmseOf(got[0], ref[0]), nmseOf(got[1], ref[1]); !(p <= 1e-12) || !(e <= 1e-12) {
				t.Errorf("%s, rank %d: weights NMSE %.3g, EMA NMSE %.3g against one trainer (limit 1e-12)", stage, r, p, e)
			} else if r == 0 {
				t.Logf("%s: weights NMSE %.3g, EMA NMSE %.3g", stage, p, e)
			}
		}
	}
}

// TestDeviceCommResumeOtherRanks: the toy MLP reduced in buckets, 4 steps on
// 2 CPU ranks, checkpointed, resumed for 4 more on 3 ranks and on 1, equals
// one trainer's 8 steps (losses, weights, EMA).
func TestDeviceCommResumeOtherRanks(t *testing.T) {
	resumeOtherRanks(t, toyDeviceCase, 4, 4, 2, []int{3, 1}, cpuDev)
}

// TestDeviceCommTinyResumeOtherRanks: ncsnpp-tiny with dropout, 2 steps on 3
// CPU ranks, resumed for 2 more on 2 ranks and on 1.
func TestDeviceCommTinyResumeOtherRanks(t *testing.T) {
	resumeOtherRanks(t, tinyDeviceCase, 2, 2, 3, []int{2, 1}, cpuDev)
}
