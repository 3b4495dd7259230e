package main

import (
	"fmt"
	"strings"

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
