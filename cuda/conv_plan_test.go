package cuda

import (
	"strings"
	"testing"

	"holdgo/tensor"
)

// The tensor-core kernels' 128 tile takes 68 KiB of dynamic shared memory, which a kernel must opt
// in to: on a backend that accepts (the recorder, like a GPU) a large convolution plans the 128
// tile with that much shared memory and launches it; where the backend refuses, the plan falls back
// to the 64 tile (36 KiB, no opt-in) and the refusal is kept; a launch above 40 KiB that was never
// opted in to is refused by the device before it reaches the backend.
func TestConvPlanSharedOptIn(t *testing.T) {
	x, w, y := []int{128, 256, 16, 16}, []int{256, 256, 3, 3}, []int{128, 256, 16, 16}
	op := tensor.Op{Kind: tensor.OpConv2d, Stride: 1, Pad: 1}
	for _, c := range []struct {
		name   string
		dev    *Device
		bf16   bool
		tile   int
		shared int
	}{
		{"recorder tf32", func() *Device { d, _ := NewRecordingDevice(); return d }(), false, 128, 4 * 4 * 16 * 2 * (128 + 8)},
		{"recorder bf16", func() *Device { d, _ := NewRecordingDevice(); return d }(), true, 128, 4 * 4 * 16 * 2 * (128 + 4)},
		{"refusing backend tf32", NewDevice(newFake()), false, 64, 4 * 4 * 16 * 2 * (64 + 8)},
	} {
		c.dev.TF32Convs, c.dev.BF16 = true, c.bf16
		for pass := range 3 {
			p := c.dev.convPlan(c.dev.convShape(x, w, y, op), pass)
			if p.tile != c.tile || p.shared != c.shared {
				t.Errorf("%s, pass %d: tile %d with %d bytes of shared memory, want %d with %d", c.name, pass, p.tile, p.shared, c.tile, c.shared)
			}
		}
		if err := c.dev.OptInErr(); (c.tile == 64) != (err != nil) {
			t.Errorf("%s: OptInErr %v", c.name, err)
		} else if err != nil && !strings.Contains(err.Error(), "hg_conv_fwd_tf32_128") {
			t.Errorf("%s: OptInErr %v does not name the kernel", c.name, err)
		}
	}
	rec, _ := NewRecordingDevice()
	err := rec.launchShared("hg_conv_fwd_tf32_128", [3]int{1, 1, 1}, 69632, new(args))
	if err == nil || !strings.Contains(err.Error(), "without opting in") {
		t.Errorf("a 68 KiB launch without an opt-in: %v", err)
	}
}
