package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"holdgo/hold"
	"holdgo/tensor"
)

// The training step's device work (kernels/train.cu, kernels/hold.cu): the loss and the gradient
// norm are reduced into device memory, the clipped Adam and the EMA read them there, and the host
// reads them only when it asks (Read): a step needs no synchronisation.

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

// StepStats is the device memory of a training step's scalars: the loss, the squared gradient
// norm and the count of non-finite steps (kernels/train.cu), and the partial sums of the two-pass
// reductions.
type StepStats struct {
	d       *Device
	stats   *tensor.Tensor // 3 float64
	partial *tensor.Tensor // 1024 float64 (gridFlat's most blocks)
}

// NewStepStats allocates a step's scalars, zeroed.
func (d *Device) NewStepStats() (*StepStats, error) {
	s := &StepStats{d: d}
	var err error
	if s.stats, err = d.alloc(float64Slots(3)); err != nil {
		return nil, err
	}
	if s.partial, err = d.alloc(float64Slots(1024)); err != nil {
		return nil, err
	}
	return s, nil
}

// alloc returns a zeroed device tensor of n float32 elements, or the allocation error.
func (d *Device) alloc(n int) (*tensor.Tensor, error) {
	b, err := d.Alloc(n)
	if err != nil {
		return nil, err
	}
	return tensor.New(viewer{d, b.(*buffer)}, n), nil
}

func (s *StepStats) finish(parts int, scale float64, slot int) error {
	p, err := s.d.ptrs(s.partial, s.stats)
	if err != nil {
		return err
	}
	return s.d.launch("hg_finish", gridRows(1), new(args).i32(parts).ptr64(p[0]).f64(scale).ptr64(p[1]).i32(slot))
}

// ScoreLoss is hold.Loss on the device: grad = 2·(out − target)/batch and the loss
// (1/batch)·Σ (out − target)² into the stats.
func (s *StepStats) ScoreLoss(grad, out, target *tensor.Tensor, batch int) error {
	if err := sameLen("score loss", out, target, grad); err != nil {
		return err
	}
	if batch <= 0 || out.Len()%batch != 0 {
		return fmt.Errorf("cuda: score loss: %d values do not split into %d samples", out.Len(), batch)
	}
	return s.ShardScoreLoss(grad, out, target, batch)
}

// ShardScoreLoss is hold.ShardLoss on the device: out and target hold a shard of a batch of batch
// samples (one data-parallel rank's), the loss and gradient are divided by batch.
func (s *StepStats) ShardScoreLoss(grad, out, target *tensor.Tensor, batch int) error {
	if err := sameLen("score loss", out, target, grad); err != nil {
		return err
	}
	if batch <= 0 {
		return fmt.Errorf("cuda: score loss: batch %d", batch)
	}
	p, err := s.d.ptrs(out, target, grad, s.partial)
	if err != nil {
		return err
	}
	g := gridFlat(out.Len())
	if err := s.d.launch("hg_score_loss", g, new(args).i32(out.Len()).i32(batch).ptr(p[0]).ptr(p[1]).ptr(p[2]).ptr(p[3])); err != nil {
		return err
	}
	return s.finish(g[0], 1/float64(batch), 0)
}

// GradNorm reduces Σ g² into the stats.
func (s *StepStats) GradNorm(g *tensor.Tensor) error {
	p, err := s.d.ptrs(g, s.partial)
	if err != nil {
		return err
	}
	grid := gridFlat(g.Len())
	if err := s.d.launch("hg_sumsq", grid, new(args).i32(g.Len()).ptr(p[0]).ptr64(p[1])); err != nil {
		return err
	}
	return s.finish(grid[0], 1, 1)
}

// ClipAdam is optim.ClipGradNorm(grads, maxNorm) followed by optim.Adam.Update at the given step
// (counted from 1), reading the gradient norm from the stats; a step whose loss or norm is not
// finite changes nothing and is counted.
func (s *StepStats) ClipAdam(params, grads, m, v *tensor.Tensor, beta1, beta2, eps, lr float64, step int, maxNorm float64) error {
	if err := sameLen("adam", params, grads, m, v); err != nil {
		return err
	}
	p, err := s.d.ptrs(params, grads, m, v, s.stats)
	if err != nil {
		return err
	}
	bc1 := 1 - math.Pow(beta1, float64(step))
	bc2 := 1 - math.Pow(beta2, float64(step))
	return s.d.launch("hg_clip_adam", gridFlat(params.Len()), new(args).i32(params.Len()).f32(float32(beta1)).
		f32(float32(beta2)).f32(float32(eps)).f32(float32(lr/bc1)).f32(float32(math.Sqrt(bc2))).f64(maxNorm).
		ptr64(p[4]).ptr(p[0]).ptr(p[1]).ptr(p[2]).ptr(p[3]))
}

// EMA is optim.EMA's update shadow −= (1 − decay)·(shadow − params), skipped after a non-finite
// step.
func (s *StepStats) EMA(shadow, params *tensor.Tensor, decay float64) error {
	if err := sameLen("ema", shadow, params); err != nil {
		return err
	}
	p, err := s.d.ptrs(shadow, params, s.stats)
	if err != nil {
		return err
	}
	return s.d.launch("hg_ema_guard", gridFlat(shadow.Len()), new(args).i32(shadow.Len()).f32(float32(1-decay)).
		ptr64(p[2]).ptr(p[0]).ptr(p[1]))
}

// Loss waits for the step and returns the loss in the stats (a data-parallel rank's share,
// before the all-reduce).
func (s *StepStats) Loss() (float64, error) {
	var v float64
	p, err := s.d.ptrOf(s.stats)
	if err != nil {
		return 0, err
	}
	if err := s.d.be.CopyDtoH(unsafe.Pointer(&v), p, 8); err != nil {
		return 0, fmt.Errorf("cuda: read the step's loss: %w", err)
	}
	return v, nil
}

// SetLoss replaces the loss in the stats (by the all-reduced one, which ClipAdam checks).
func (s *StepStats) SetLoss(v float64) error {
	p, err := s.d.ptrOf(s.stats)
	if err != nil {
		return err
	}
	if err := s.d.be.CopyHtoD(p, unsafe.Pointer(&v), 8); err != nil {
		return fmt.Errorf("cuda: write the step's loss: %w", err)
	}
	return nil
}

// Read copies the scalars to the host (one device-to-host copy, the step's only synchronisation)
// and clears the non-finite count: the last loss, the last gradient norm, and how many steps since
// the previous Read were skipped as non-finite.
func (s *StepStats) Read() (loss, norm float64, skipped int, err error) {
	var v [3]float64
	p, err := s.d.ptrOf(s.stats)
	if err != nil {
		return 0, 0, 0, err
	}
	if err := s.d.be.CopyDtoH(unsafe.Pointer(&v[0]), p, 24); err != nil {
		return 0, 0, 0, fmt.Errorf("cuda: read step statistics: %w", err)
	}
	if v[2] != 0 {
		if err := s.d.be.Zero(p+16, 8); err != nil {
			return 0, 0, 0, err
		}
	}
	return v[0], math.Sqrt(v[1]), int(v[2]), nil
}

// StagedBatch is a training step's host inputs in one device buffer, uploaded by one copy: the
// data batch q0 (B×d), the times (B, float32 for the network) and the float64 coefficients of the
// fused reparameterisation (PerturbCoefficients, 32 per sample).
type StagedBatch struct {
	Data, Times *tensor.Tensor // views into the device buffer
	host        []float32
	dev         *tensor.Tensor
	coef        uintptr
	batch, dim  int
	d           *Device
}

// NewStagedBatch allocates the host and device buffers of a batch of B samples of d values.
func (d *Device) NewStagedBatch(batch, dim int) (*StagedBatch, error) {
	// Layout in float32 slots: coefficients first (8-byte aligned), then data, then times.
	nc := float64Slots(32 * batch)
	sb := &StagedBatch{host: make([]float32, nc+batch*dim+batch), batch: batch, dim: dim, d: d}
	var err error
	if sb.dev, err = d.alloc(len(sb.host)); err != nil {
		return nil, err
	}
	if sb.Data, err = d.View(sb.dev, nc, batch, dim); err != nil {
		return nil, err
	}
	if sb.Times, err = d.View(sb.dev, nc+batch*dim, batch); err != nil {
		return nil, err
	}
	sb.coef, err = d.ptrOf(sb.dev)
	return sb, err
}

// HostData is the host side of Data, to be filled before Upload.
func (sb *StagedBatch) HostData() []float32 {
	nc := float64Slots(32 * sb.batch)
	return sb.host[nc : nc+sb.batch*sb.dim]
}

// Upload computes the reparameterisation coefficients of the times (hold.SDE.PerturbMaps), stores
// them and the times next to the data and copies the whole batch to the device.
func (sb *StagedBatch) Upload(sde *hold.SDE, times []float64) error {
	if len(times) != sb.batch {
		return fmt.Errorf("cuda: staged batch of %d samples given %d times", sb.batch, len(times))
	}
	var c [32]float64
	for b, t := range times {
		putPerturbCoefficients(c[:], sde, t)
		putFloat64s(sb.host[float64Slots(32*b):float64Slots(32*b+32)], c[:])
		sb.host[float64Slots(32*sb.batch)+sb.batch*sb.dim+b] = float32(t)
	}
	if err := sb.dev.Buffer().Write(sb.host); err != nil {
		return fmt.Errorf("cuda: upload batch: %w", err)
	}
	return nil
}

// Perturb runs the fused reparameterisation on the staged batch: x (B, n·d) = M·x0 + C·ε and
// target (B, d) = −ε_last, ε (B, n·d) and, for DSM, aux (B, (n−1)·d) already on the device.
func (sb *StagedBatch) Perturb(n int, eps, aux, x, target *tensor.Tensor) error {
	return sb.d.perturb(sb.batch, n, sb.dim, sb.coef, sb.Data, eps, aux, x, target)
}
