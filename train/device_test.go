//go:build cudashim || cuda

package train

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"holdgo/checkpoint"
	"holdgo/cuda"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/tensor"
)

// Training on the CUDA device through the host shim (the kernels of kernels/*.cu compiled for the
// CPU; -tags cudashim), or on a real GPU in strict FP32 (-tags cuda), against the same run on the CPU: the same seed draws the same data, times, noise (Philox on
// both) and initial weights, so the runs differ only by floating-point rounding.
//
// What limits the agreement: the GEMMs sum in another order (hg_sgemm's tiles against the CPU's
// packed panels), the CPU's Adam, EMA and reparameterisation use fused multiply-adds where the
// shim rounds twice, and the loss and norm reductions add in another order. These float32
// differences (≈1e-7 relative) grow through 100 steps of Adam, whose update m/(√v + ε) is
// sensitive where gradients are near zero, to ≈1e-6–1e-5 in the weights.

const (
	lossRelTol = 1e-3
	paramNMSE  = 1e-4
)

type toyRun struct {
	tr  *Trainer
	net *layers.MLP
}

func newToyRun(t *testing.T, kind string, dev tensor.Device, batch int) toyRun {
	t.Helper()
	sde, src, net, d := toyModel(t, kind)
	loss, err := ScoreLoss(sde, net, src.Sample, batch, d, TimeSampling{Scheme: TimesUniform})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{Steps: 100, Batch: batch, LR: 1e-3, Warmup: 10, GradClip: 1, EMA: 0.999, Seed: 5}, net.Params, loss)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetDevice(dev); err != nil {
		t.Fatal(err)
	}
	return toyRun{tr, net}
}

func nmse(got, want []float32) float64 {
	var num, den float64
	for i := range got {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return num / max(den, 1e-300)
}

// state returns the host copies of the parameters, EMA weights and Adam moments.
func (r toyRun) state(t *testing.T) [4][]float32 {
	t.Helper()
	if err := r.tr.download(); err != nil {
		t.Fatal(err)
	}
	return [4][]float32{slices.Clone(r.tr.Params.Data), slices.Clone(r.tr.EMA.Shadow), slices.Clone(r.tr.Adam.M), slices.Clone(r.tr.Adam.V)}
}

func compareStates(t *testing.T, what string, got, want [4][]float32) {
	t.Helper()
	for i, name := range []string{"parameters", "EMA weights", "Adam m", "Adam v"} {
		if e := nmse(got[i], want[i]); !(e <= paramNMSE) {
			t.Errorf("%s: %s NMSE %.3g > %.0g", what, name, e, paramNMSE)
		} else {
			t.Logf("%s: %s NMSE %.3g", what, name, e)
		}
	}
}

// The toy MLP on the Swiss rolls, 100 steps, HOLD, CLD and VP: every loss within 1e-3 relative
// and the final state within NMSE 1e-4 of the CPU run.
func TestShimTrainingMatchesCPU(t *testing.T) {
	for _, kind := range []string{hold.KindHOLD, hold.KindCLD, hold.KindVP} {
		t.Run(kind, func(t *testing.T) {
			stepAlike(t, kind, newToyRun(t, kind, tensor.CPU, 64), newToyRun(t, kind, testDevice(t), 64))
		})
	}
}

// stepAlike trains cpu and gpu 100 steps side by side: every loss and gradient norm within lossRelTol
// (relative), the same learning rate and step, and the final states within NMSE paramNMSE.
func stepAlike(t *testing.T, what string, cpu, gpu toyRun) {
	t.Helper()
	worst := 0.0
	for step := range 100 {
		a, err := cpu.tr.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		b, err := gpu.tr.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		rel := math.Abs(a.Loss-b.Loss) / math.Abs(a.Loss)
		worst = max(worst, rel)
		if !(rel <= lossRelTol) || !(math.Abs(a.GradNorm-b.GradNorm) <= lossRelTol*a.GradNorm) || a.LR != b.LR || a.Step != b.Step {
			t.Fatalf("%s, step %d: cpu %+v, shim %+v (loss relative difference %.3g)", what, step+1, a, b, rel)
		}
	}
	t.Logf("%s: worst loss relative difference over 100 steps %.3g", what, worst)
	compareStates(t, what, gpu.state(t), cpu.state(t))
}

// Resume across devices: 10 steps on the shim, a checkpoint, 10 more on the CPU from it equal 20
// steps on the CPU; and 10 on the CPU + 10 resumed on the shim likewise. Each device alone resumes
// bit-exactly.
func TestShimResumeAcrossDevices(t *testing.T) {
	dir := t.TempDir()
	ref := newToyRun(t, hold.KindHOLD, tensor.CPU, 32)
	var refLoss []float64
	for range 20 {
		s, err := ref.tr.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		refLoss = append(refLoss, s.Loss)
	}
	for i, devs := range [][2]func() tensor.Device{
		{func() tensor.Device { return testDevice(t) }, func() tensor.Device { return tensor.CPU }},
		{func() tensor.Device { return tensor.CPU }, func() tensor.Device { return testDevice(t) }},
		{func() tensor.Device { return testDevice(t) }, func() tensor.Device { return testDevice(t) }},
	} {
		first := newToyRun(t, hold.KindHOLD, devs[0](), 32)
		for range 10 {
			if _, err := first.tr.TrainStep(); err != nil {
				t.Fatal(err)
			}
		}
		path := fmt.Sprintf("%s/ckpt%d.safetensors", dir, i)
		if err := first.tr.Save(path, nil); err != nil {
			t.Fatal(err)
		}
		second := newToyRun(t, hold.KindHOLD, tensor.CPU, 32)
		f, err := checkpoint.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := second.tr.Restore(f); err != nil {
			t.Fatal(err)
		}
		if err := second.tr.SetDevice(devs[1]()); err != nil {
			t.Fatal(err)
		}
		what := fmt.Sprintf("%s then %s", first.tr.Device().Name(), second.tr.Device().Name())
		for step := 10; step < 20; step++ {
			s, err := second.tr.TrainStep()
			if err != nil {
				t.Fatal(err)
			}
			if rel := math.Abs(s.Loss-refLoss[step]) / refLoss[step]; !(rel <= lossRelTol) {
				t.Errorf("%s: step %d loss %.9g, 20 steps on cpu %.9g", what, step+1, s.Loss, refLoss[step])
			}
		}
		compareStates(t, what, second.state(t), ref.state(t))
	}
}

// A non-logging step of the toy MLP on the device does no host synchronisation and one
// host-to-device copy (the staged batch); a logging step adds the one read of the scalars.
func TestShimStepCounters(t *testing.T) {
	dev, counting := cuda.NewCountingDevice(testBackend(t))
	r := newToyRun(t, hold.KindHOLD, dev, 16)
	if _, err := r.tr.Advance(false); err != nil { // warm: buffers allocated
		t.Fatal(err)
	}
	before := counting.Counters()
	if _, err := r.tr.Advance(false); err != nil {
		t.Fatal(err)
	}
	c := counting.Counters().Sub(before)
	if c.HostSyncs() != 0 || c.HtoD != 1 || c.Launches == 0 {
		t.Errorf("non-logging step: %v; want 0 host syncs and 1 H→D copy", c)
	}
	t.Logf("non-logging step: %v", c)
	before = counting.Counters()
	if _, err := r.tr.Advance(true); err != nil {
		t.Fatal(err)
	}
	if c := counting.Counters().Sub(before); c.HostSyncs() != 1 || c.HtoD != 1 {
		t.Errorf("logging step: %v; want 1 host sync and 1 H→D copy", c)
	}
}

// EDM's preconditioning (ShardEDMLoss: input and target formed on the host in float64, the loss recorded
// by tensor.ScoreLoss on the step's device) trains on the shim as on the CPU: HOLD-3 and VP with
// --times sigma:edm, 100 steps, every loss within 1e-3 relative and the final state within NMSE 1e-4.
func TestShimEDMTrainingMatchesCPU(t *testing.T) {
	for _, kind := range []string{hold.KindHOLD, hold.KindVP} {
		t.Run(kind, func(t *testing.T) {
			run := func(dev tensor.Device) toyRun {
				sde, src, net, d := toyModel(t, kind)
				loss, err := ShardEDMLoss(sde, net, src.Sample, Shard{Global: 64, Len: 64}, d, TimeSampling{Scheme: "sigma:edm"})
				if err != nil {
					t.Fatal(err)
				}
				tr, err := New(Options{Steps: 100, Batch: 64, LR: 1e-3, Warmup: 10, GradClip: 1, EMA: 0.999, Seed: 5}, net.Params, loss)
				if err != nil {
					t.Fatal(err)
				}
				if err := tr.SetDevice(dev); err != nil {
					t.Fatal(err)
				}
				return toyRun{tr, net}
			}
			stepAlike(t, kind+" (EDM)", run(tensor.CPU), run(testDevice(t)))
		})
	}
}
