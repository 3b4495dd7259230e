//go:build cudashim || cuda

package train

import (
	"context"
	"path/filepath"
	"testing"

	"holdgo/cuda"
	"holdgo/dist"
	"holdgo/tensor"
)

// TestShimDeviceCommMatchesOne: the reduction in device memory with each rank
// on its own CUDA device (the host shim, or a GPU): the toy MLP and ncsnpp-tiny
// with dropout on 2 and 3 ranks, their gradients summed bucket by bucket by the
// in-process device communicator as the backward sweep finishes them (the
// --dist nccl path with the in-process engine in NCCL's place), equal one
// device trainer with the whole batch.
func TestShimDeviceCommMatchesOne(t *testing.T) {
	dev := func() tensor.Device { return serialDevice(t) }
	runDeviceRanks(t, toyDeviceCase, 2, dev)
	runDeviceRanks(t, toyDeviceCase, 3, dev)
	runDeviceRanks(t, tinyDeviceCase, 2, dev)
	if testing.Short() {
		t.Log("-short: ncsnpp-tiny on 3 ranks left out (minutes on the shim)")
		return
	}
	runDeviceRanks(t, tinyDeviceCase, 3, dev)
}

// TestShimNCCLEngineMatchesOne: the same ranks with the NCCL engine (cuda.NewNCCLEngine: the
// engine --dist nccl runs on GPUs, its waits and abort path included) over the shim's in-process
// NCCL (cuda.NewShimCollectives), each rank on its own shim device: the toy MLP on 2 and 3 ranks
// and ncsnpp-tiny with dropout on 2 equal one device trainer with the whole batch.
func TestShimNCCLEngineMatchesOne(t *testing.T) {
	if !cuda.ShimBuilt {
		t.Skip("the shim's NCCL needs -tags cudashim")
	}
	dev := func() tensor.Device { return serialDevice(t) }
	engines := func(devs []tensor.Device) ([]dist.DeviceComm, error) {
		colls := cuda.NewShimCollectives(len(devs))
		out := make([]dist.DeviceComm, len(devs))
		for r, d := range devs {
			e, err := cuda.NewNCCLEngine(d.(*cuda.Device), colls[r], r, len(devs), "shim nccl", 0)
			if err != nil {
				return nil, err
			}
			out[r] = e
		}
		return out, nil
	}
	runDeviceRanksWith(t, toyDeviceCase, 2, dev, engines)
	runDeviceRanksWith(t, toyDeviceCase, 3, dev, engines)
	runDeviceRanksWith(t, tinyDeviceCase, 2, dev, engines)
}

// TestShimRunPrecision: --precision reaches the CUDA device train.Run opens (StrictFP32: strict on,
// tf32, bf16 and the default off; BF16: bf16 on, the others off).
func TestShimRunPrecision(t *testing.T) {
	for _, c := range []struct {
		precision  string
		strict, bf bool
	}{{PrecisionStrict, true, false}, {PrecisionTF32, false, false}, {"", false, false}, {PrecisionBF16, false, true}} {
		dev := serialDevice(t)
		dev.StrictFP32, dev.BF16 = !c.strict, !c.bf
		opt := tinyRun(filepath.Join(t.TempDir(), "run"), 2, false)
		opt.OpenDevice = func() (tensor.Device, error) { return dev, nil }
		configure := opt.Configure
		opt.Configure = func(base RunConfig) (RunConfig, error) {
			cfg, err := configure(base)
			cfg.Precision = c.precision
			return cfg, err
		}
		if err := Run(context.Background(), dist.Single{}, opt); err != nil {
			t.Fatal(err)
		}
		if dev.StrictFP32 != c.strict || dev.BF16 != c.bf {
			t.Errorf("--precision %q: StrictFP32 %v, BF16 %v", c.precision, dev.StrictFP32, dev.BF16)
		}
	}
}
