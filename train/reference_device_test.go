package train

import (
	"math"
	"testing"

	"holdgo/hold"
	"holdgo/layers"
	"holdgo/sample"
	"holdgo/tensor"
)

// The device seam without CUDA: training and device-resident sampling on tensor.Reference (and
// sampling on tensor.CPU) run the same code as on a GPU (the op list and its fused families through tensor.Device), and agree
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

// TestDeviceSamplingMatchesHost: lt and em keep their state on the CPU (tensor.CPU, where DeviceFor
// puts them as on any device) and on the Reference device, and agree with the host samplers' float64
// state up to float32 rounding, bit for bit whether the chunks run one or two at a time; a score
// that is no network stays on the host of a host-resident device.
func TestDeviceSamplingMatchesHost(t *testing.T) {
	_, net, sde := referenceToy(t, tensor.CPU)
	d := 2
	for _, dev := range []tensor.Device{tensor.CPU, tensor.Reference} {
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
			got0, _, err := s.DeviceFor(dev, struct{ hold.Scorer }{score}, dev.Name())
			if err != nil || got0 != nil {
				t.Fatalf("%s on %s: DeviceFor of a score that is no network: %v, %v (want nil: the host)", method, dev.Name(), got0, err)
			}
			on, dnet, err := s.DeviceFor(dev, score, dev.Name())
			if err != nil || on != dev {
				t.Fatalf("%s: DeviceFor(%s): %v, %v", method, dev.Name(), on, err)
			}
			got, err := s.SampleOn(on, dnet, 11, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range got.X {
				if w := want.X[i]; !(math.Abs(v-w) <= 1e-4*(1+math.Abs(w))) {
					t.Fatalf("%s: element %d: %s device %v, host %v", method, i, dev.Name(), v, w)
				}
			}
			if got.NFE != want.NFE {
				t.Errorf("%s: NFE %d on %s, %d on the host", method, got.NFE, dev.Name(), want.NFE)
			}
			s.Workers = 2 // chunks two at a time on a host-resident device: the same bits
			par, err := s.SampleOn(on, dnet, 11, 3)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range par.X {
				if v != got.X[i] || par.NFE != got.NFE {
					t.Fatalf("%s on %s: element %d: %v with 2 workers, %v with one (NFE %d, %d)", method, dev.Name(), i, v, got.X[i], par.NFE, got.NFE)
				}
			}
			if err := net.Params.ToDevice(tensor.CPU); err != nil {
				t.Fatal(err)
			}
		}
	}
}
