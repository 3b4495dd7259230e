package experiment

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/fid"
	"holdgo/sample"
	"holdgo/train"
)

// FIDSampling draws N images of the shipped Fashion-MNIST model with its sampler, reports the draw
// and the diverged count, and serves the images; a path that is no run is an InputError, and On's
// error comes back as it is.
func TestFIDSampling(t *testing.T) {
	var log strings.Builder
	diverged := -1
	f := FIDSampling{Spec: sample.Spec{Method: "em", NFE: 3, Grid: sample.GridQuadratic, End: 1e-3}, N: 2, Seed: 1, Device: "cpu", Log: &log,
		On: func(s *sample.Sampler, m *train.Model) (func(int, uint64) (*sample.Result, error), error) {
			return s.Sample, nil
		},
		Diverged: func(d, n int) {
			if n != 2 {
				t.Errorf("Diverged(%d, %d)", d, n)
			}
			diverged = d
		}}
	src, rep, err := f.Sample("samples", "../models/fmnist-hold3")
	if err != nil {
		t.Fatal(err)
	}
	if src.C != 1 || src.H != 28 || src.W != 28 || src.N+rep.Diverged != 2 || rep.NFE != 3 || rep.Sampler != "em" || rep.Grid != sample.GridQuadratic || diverged != rep.Diverged {
		t.Errorf("source %+v, report %+v, diverged %d", src, rep, diverged)
	}
	if !strings.HasPrefix(log.String(), "samples: sampling 2 images with em on cpu …\nsamples: 2 samples, NFE 3, ") {
		t.Errorf("log:\n%s", log.String())
	}
	var ie *fid.InputError
	if _, _, err := f.Sample("ref", filepath.Join(t.TempDir(), "none")); !errors.As(err, &ie) || !strings.HasPrefix(ie.Msg, "fid --ref ") {
		t.Errorf("no run: %v", err)
	}
	errDevice := errors.New("no device")
	f.On = func(*sample.Sampler, *train.Model) (func(int, uint64) (*sample.Result, error), error) {
		return nil, errDevice
	}
	if _, _, err := f.Sample("samples", "../models/fmnist-hold3"); err != errDevice {
		t.Errorf("On's error: %v", err)
	}
}
