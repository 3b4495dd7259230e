package sample

import (
	"fmt"
	"io"

	"holdgo/hold"
	"holdgo/layers"
	"holdgo/tensor"
)

// Func draws n samples from seed: Sampler.Sample, or Sampler.SampleOn on a device.
type Func func(n int, seed uint64) (*Result, error)

// EachFunc draws n samples from seed chunk by chunk, each chunk handed to emit: Sampler.Each, or
// Sampler.EachOn on a device.
type EachFunc func(n int, seed uint64, emit func(first int, x []float64) error) (StreamResult, error)

// On returns the sampling function of device dev (named name, as --device gives it; "" or "cpu" the
// host) for the model's score (before any clipping): SampleOn with the network moved to the device
// where the sampler keeps its state there (DeviceFor), Sample otherwise. Where a device other than the
// CPU was asked for and the state stays on the host, it says why on w (HostReason): no silent
// fallback.
func (s *Sampler) On(dev tensor.Device, name string, score hold.Scorer, w io.Writer) (Func, error) {
	cd, net, err := s.deviceNoted(dev, name, score, w)
	if err != nil || cd == nil {
		return s.Sample, err
	}
	return func(n int, seed uint64) (*Result, error) { return s.SampleOn(cd, net, n, seed) }, nil
}

// EachOnDevice is On for chunk-by-chunk sampling (Each, EachOn).
func (s *Sampler) EachOnDevice(dev tensor.Device, name string, score hold.Scorer, w io.Writer) (EachFunc, error) {
	cd, net, err := s.deviceNoted(dev, name, score, w)
	if err != nil || cd == nil {
		return s.Each, err
	}
	return func(n int, seed uint64, emit func(int, []float64) error) (StreamResult, error) {
		return s.EachOn(cd, net, n, seed, emit)
	}, nil
}

// deviceNoted is DeviceFor, with the note on w where a device other than the CPU keeps the state on
// the host.
func (s *Sampler) deviceNoted(dev tensor.Device, name string, score hold.Scorer, w io.Writer) (tensor.Device, layers.ScoreNet, error) {
	cd, net, err := s.DeviceFor(dev, score, name)
	if err != nil {
		return nil, nil, err
	}
	if cd == nil && name != "" && name != "cpu" {
		fmt.Fprintf(w, "note: --device %s evaluates the network there and integrates the state on the host: %s\n", name, s.HostReason(score))
	}
	return cd, net, nil
}
