package train

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/layers"
	"holdgo/sample"
	"holdgo/tensor"
)

// The device seam without CUDA: training and device-resident sampling on tensor.Reference run the
// same code as on a GPU (the op list and its fused families through tensor.Device), and agree
// with the host path up to float32 rounding.

func referenceToy(t *testing.T, dev tensor.Device) (*Trainer, *layers.MLP, *hold.SDE) {
	t.Helper()
	sde, src, net, d := toyModel(t, hold.KindHOLD)
	loss, err := ScoreLoss(sde, net, src.Sample, 16, d, TimeSampling{Scheme: TimesUniform})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{Steps: 10, Batch: 16, LR: 1e-3, Warmup: 2, GradClip: 1, EMA: 0.999, Seed: 5}, net.Params, loss)
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.SetDevice(dev); err != nil {
		t.Fatal(err)
	}
	return tr, net, sde
}

func TestReferenceDeviceTrainingMatchesCPU(t *testing.T) {
	cpu, _, _ := referenceToy(t, tensor.CPU)
	ref, _, _ := referenceToy(t, tensor.Reference)
	for step := range 5 {
		a, err := cpu.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		b, err := ref.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		if rel := math.Abs(a.Loss-b.Loss) / a.Loss; !(rel <= 1e-5) || !(math.Abs(a.GradNorm-b.GradNorm) <= 1e-5*a.GradNorm) || a.Step != b.Step {
			t.Fatalf("step %d: cpu %+v, reference %+v", step+1, a, b)
		}
	}
	if err := ref.download(); err != nil {
		t.Fatal(err)
	}
	for i, v := range ref.Params.Data {
		if w := cpu.Params.Data[i]; !(math.Abs(float64(v-w)) <= 1e-5*(1+math.Abs(float64(w)))) {
			t.Fatalf("parameter %d: reference %v, cpu %v", i, v, w)
		}
	}
}

func TestReferenceDeviceSamplingMatchesHost(t *testing.T) {
	_, net, sde := referenceToy(t, tensor.CPU)
	d := 2
	for _, method := range []string{"lt", "em"} {
		score := &NetworkScorer{SDE: sde, Net: net}
		s, err := sample.Spec{Method: method, Steps: 12, Grid: sample.GridQuadratic, End: 1e-3}.Build(sde, score, d)
		if err != nil {
			t.Fatal(err)
		}
		s.MaxBatch = 5 // three chunks
		want, err := s.Sample(11, 3)
		if err != nil {
			t.Fatal(err)
		}
		dev, dnet, err := s.DeviceFor(tensor.Reference, score, "reference")
		if err != nil || dev != tensor.Reference {
			t.Fatalf("%s: DeviceFor: %v, %v", method, dev, err)
		}
		got, err := s.SampleOn(dev, dnet, 11, 3)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range got.X {
			if w := want.X[i]; !(math.Abs(v-w) <= 1e-4*(1+math.Abs(w))) {
				t.Fatalf("%s: element %d: reference device %v, host %v", method, i, v, w)
			}
		}
		if got.NFE != want.NFE {
			t.Errorf("%s: NFE %d on the device, %d on the host", method, got.NFE, want.NFE)
		}
		if err := net.Params.ToDevice(tensor.CPU); err != nil {
			t.Fatal(err)
		}
	}
}
