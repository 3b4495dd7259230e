package autograd_test

import (
	"testing"

	"holdgo/tensor"
	"holdgo/tensor/optest"
)

// TestGradientsTight checks every backward rule tightly enough to catch a 0.1 % change of it (a term
// multiplied by 1.001), which TestGradients' 1e-2 relative tolerance lets through: optest's gradient
// mode (Richardson-extrapolated central differences of a float64-accurate forward pass,
// optest.RunGrad) with the analytic gradient taken on the Reference and the CPU device.
func TestGradientsTight(t *testing.T) {
	for _, dev := range []tensor.Device{tensor.Reference, tensor.CPU} {
		optest.CheckGrad(t, dev, "tight")
	}
}
