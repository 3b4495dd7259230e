package train

import (
	"errors"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"holdgo/autograd"
	"holdgo/checkpoint"
	"holdgo/layers"
	"holdgo/tensor"
)

// regression fits y = sin(3x) with a small MLP; data come from the trainer's rng.
func regression(m *layers.MLP) LossFunc {
	return func(c *StepContext) (*autograd.Value, error) {
		g, rng := c.Tape, c.RNG
		const n = 32
		x, y := tensor.Zeros(n, 1), tensor.Zeros(n, 1)
		rng.FillUniform(x.Data(), -1, 1)
		for i, v := range x.Data() {
			y.Data()[i] = float32(math.Sin(3 * float64(v)))
		}
		out := m.Forward(g, g.Const(x))
		return g.Mean(g.Square(g.Sub(out, g.Const(y)))), nil
	}
}

func newRun(t *testing.T) (*Trainer, *layers.MLP) {
	m, err := layers.NewMLP(layers.MLPConfig{In: 1, Hidden: 16, Out: 1, Layers: 3}, tensor.NewRNG(5))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := New(Options{Steps: 10, Batch: 32, LR: 1e-2, Warmup: 3, GradClip: 1, EMA: 0.9, Seed: 42}, m.Params, regression(m))
	if err != nil {
		t.Fatal(err)
	}
	return tr, m
}

func TestResumeIsBitExact(t *testing.T) {
	straight, _ := newRun(t)
	var want []float64
	for range 10 {
		s, err := straight.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, s.Loss)
	}
	if !(want[9] < want[0]) {
		t.Fatalf("loss did not decrease: %v", want)
	}

	first, _ := newRun(t)
	var got []float64
	for range 5 {
		s, _ := first.TrainStep()
		got = append(got, s.Loss)
	}
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	if err := first.Save(path, map[string]string{"model": "test"}); err != nil {
		t.Fatal(err)
	}
	second, _ := newRun(t)
	f, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Restore(f); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		s, _ := second.TrainStep()
		got = append(got, s.Loss)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("resumed loss curve %v\nuninterrupted      %v", got, want)
	}
	if !slices.Equal(second.Params.Data, straight.Params.Data) || !slices.Equal(second.EMA.Shadow, straight.EMA.Shadow) {
		t.Fatal("resumed weights differ from the uninterrupted run")
	}
}

// TestNonFiniteLossKeepsState is the package's non-finite policy: a step with a NaN or Inf loss
// changes neither the parameters nor Adam's moments nor the EMA weights, counts as a step, and is
// reported by the read that follows (at once by TrainStep, at the next Read after Advance(false)),
// once; the steps after it train normally.
func TestNonFiniteLossKeepsState(t *testing.T) {
	for _, bad := range []float32{float32(math.NaN()), float32(math.Inf(1))} {
		tr, m := newRun(t)
		good := tr.loss
		if _, err := tr.TrainStep(); err != nil {
			t.Fatal(err)
		}
		snapshot := func() [][]float32 {
			return [][]float32{slices.Clone(m.Params.Data), slices.Clone(tr.Adam.M), slices.Clone(tr.Adam.V), slices.Clone(tr.EMA.Shadow)}
		}
		before := snapshot()
		tr.loss = func(c *StepContext) (*autograd.Value, error) {
			if c.Step == 1 || c.Step == 3 {
				return c.Tape.Const(tensor.FromSlice([]float32{bad}, 1)), nil
			}
			return good(c)
		}
		if _, err := tr.TrainStep(); !errors.Is(err, ErrNonFinite) {
			t.Fatalf("loss %v: error %v, want ErrNonFinite", bad, err)
		}
		if !slices.EqualFunc(before, snapshot(), slices.Equal) || tr.Step != 2 || tr.Adam.Step != 2 || tr.EMA.Updates != 2 {
			t.Fatalf("loss %v changed the state, or the step was not counted (step %d)", bad, tr.Step)
		}
		if _, err := tr.TrainStep(); err != nil { // reported once; the next step trains
			t.Fatal(err)
		}
		if slices.Equal(before[0], m.Params.Data) {
			t.Fatal("the step after the skipped one did not train")
		}
		if _, err := tr.Advance(false); err != nil { // not read: not reported yet
			t.Fatal(err)
		}
		if _, err := tr.Advance(false); err != nil {
			t.Fatal(err)
		}
		if _, err := tr.Read(); !errors.Is(err, ErrNonFinite) {
			t.Fatalf("Read after a skipped Advance(false): %v, want ErrNonFinite", err)
		}
		if _, err := tr.Read(); err != nil {
			t.Fatalf("a skipped step reported twice: %v", err)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	good := Options{Steps: 1, Batch: 1, LR: 1e-3, EMA: 0.999}
	for _, bad := range []Options{
		{Steps: -1, Batch: 1, LR: 1}, {Steps: 1, Batch: 0, LR: 1}, {Steps: 1, Batch: 1, LR: 0},
		{Steps: 1, Batch: 1, LR: 1, EMA: 1}, {Steps: 1, Batch: 1, LR: 1, GradClip: -1},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
}
