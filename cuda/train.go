package cuda

import "holdgo/tensor"

// The training step's device work (kernels/train.cu) runs as the fused ops tensor.ScoreLoss,
// SumSq, Adam and EMA (fusedops.go): the loss and the gradient norm are reduced into device
// memory, the clipped Adam and the EMA read them there, and the host reads them only when it asks
// (tensor.ReadStats): a step needs no synchronisation.

// gridFlat is the grid of the flat-buffer kernels of a training step (reductions, optimizer): at
// least 8 elements per thread and at most 1024 blocks, which keeps a GPU's memory system busy for
// large models (≥ 1024·256 threads) and launches few threads for small ones — the host shim runs
// every thread as a fiber, so a grid of one thread per element makes it slow.
func gridFlat(n int) [3]int {
	return [3]int{max(1, min((n+8*blockSize-1)/(8*blockSize), 1024)), 1, 1}
}

// Zero clears t (a memset on the device's stream).
func (d *Device) Zero(t *tensor.Tensor) error {
	p, err := d.ptrOf(t)
	if err != nil || t.Len() == 0 {
		return err
	}
	return d.be.Zero(p, 4*t.Len())
}
