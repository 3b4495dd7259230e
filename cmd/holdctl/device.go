package main

import (
	"fmt"
	"strings"

	"holdgo/cuda"
	"holdgo/dist"
	"holdgo/tensor"
)

// openDevice returns the device named by --device: "cpu", "reference", or "cuda" / "cuda:N",
// which openCUDA of the build (device_cuda.go, device_shim.go, device_nocuda.go) opens or
// refuses with a message that says how to get a CUDA build.
func openDevice(name string) (tensor.Device, error) {
	switch {
	case name == "" || name == "cpu":
		return tensor.CPU, nil
	case name == "reference":
		return tensor.Reference, nil
	case name == "cuda" || strings.HasPrefix(name, "cuda:"):
		d, err := openCUDA(name)
		if err != nil {
			return nil, err
		}
		return d, nil
	}
	return nil, fmt.Errorf("unknown device %q (want cpu, reference, cuda or cuda:N)", name)
}

// rankDevice is the --device that a rank of a run of ranks > 1 opens: "cuda" without an ordinal
// becomes cuda:N, N the GPU of the rank's local rank on its node (dist.LocalRank from lookup,
// os.LookupEnv in holdctl; dist.DeviceForLocalRank over the count GPUs visible: local rank N takes
// GPU N, one visible GPU serves every rank, more ranks than GPUs is an error). One rank, an
// explicit cuda:N, another device or no local rank in the environment leave name as it is.
func rankDevice(name string, ranks int, lookup func(string) (string, bool), count func() (int, error)) (string, error) {
	if name != "cuda" || ranks < 2 {
		return name, nil
	}
	local, source, ok, err := dist.LocalRank(lookup)
	if err != nil || !ok {
		return name, err
	}
	n, err := count()
	if err != nil {
		return "", fmt.Errorf("--device cuda for local rank %d (%s): %w", local, source, err)
	}
	ordinal, err := dist.DeviceForLocalRank(local, n)
	if err != nil {
		return "", fmt.Errorf("--device cuda for local rank %d (%s): %w", local, source, err)
	}
	return fmt.Sprintf("cuda:%d", ordinal), nil
}

// rankLine is the line each rank of a run of several processes writes once at start: where it runs
// and on what ("rank 1 of 4: host node2, device NVIDIA H100 80GB HBM3 (sm_90 PTX) (bus id
// 00000000:19:00.0)"), so a log shows which GPU every rank took.
func rankLine(rank, size int, host string, dev tensor.Device) string {
	what := "device " + dev.Name()
	if cd, ok := dev.(*cuda.Device); ok {
		bus := "none" // the host shim
		if b, ok := cd.Backend().(interface{ BusID() string }); ok {
			bus = b.BusID()
		}
		what = fmt.Sprintf("device %s (bus id %s)", backendName(cd.Backend()), bus)
	}
	return fmt.Sprintf("rank %d of %d: host %s, %s", rank, size, host, what)
}
