package train

import (
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"holdgo/autograd"
	"holdgo/dist"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// The reduction in device memory (bucket.go) with the in-process device
// communicator (dist.NewLocalDevice): N trainers, each with its own device and
// 1/N of the batch, their gradients summed bucket by bucket as the backward
// sweep finishes them, train like one trainer with the whole batch. Here on the
// CPU device; devicecomm_shim_test.go runs the same on the CUDA host shim.

// deviceCommCase builds rank r of size's trainer (size 1: the whole batch) on
// the CPU; SetDevice moves it.
type deviceCommCase struct {
	name        string
	steps       int
	bucketBytes int
	build       func(t *testing.T, r, size int) *Trainer
	// backward, when set, is the bucket order a backward pass must follow
	// (a plain stack of layers: the last parameters first).
	backward bool
}

// recorder is a DeviceComm that notes the length of each buffer started, in order.
type recorder struct {
	dist.DeviceComm
	mu   sync.Mutex
	lens []int
}

func (c *recorder) StartAllreduce(buf dist.Buffer, e dist.Elem) error {
	c.mu.Lock()
	c.lens = append(c.lens, buf.Len())
	c.mu.Unlock()
	return c.DeviceComm.StartAllreduce(buf, e)
}

// deviceRanksResult is what runDeviceRanks measured.
type deviceRanksResult struct {
	worstLoss, paramNMSE, emaNMSE float64
	buckets                       []Bucket
	order                         []int
	swept                         int
}

// runDeviceRanks trains c on one trainer and on size ranks joined by the
// in-process device communicator, each on a device from newDev, and compares
// the losses and states.
func runDeviceRanks(t *testing.T, c deviceCommCase, size int, newDev func() tensor.Device) deviceRanksResult {
	return runDeviceRanksWith(t, c, size, newDev, func(devs []tensor.Device) ([]dist.DeviceComm, error) {
		return dist.NewLocalDevice(len(devs))
	})
}

// runDeviceRanksWith is runDeviceRanks with the ranks' engines made by engines from their devices
// (cuda.NewNCCLEngine over the shim's collectives; dist.NewLocalDevice).
func runDeviceRanksWith(t *testing.T, c deviceCommCase, size int, newDev func() tensor.Device,
	engines func(devs []tensor.Device) ([]dist.DeviceComm, error)) deviceRanksResult {
	t.Helper()
	one := c.build(t, 0, 1)
	if err := one.SetDevice(newDev()); err != nil {
		t.Fatal(err)
	}
	var want []float64
	for range c.steps {
		st, err := one.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, st.Loss)
	}
	devs := make([]tensor.Device, size)
	for r := range devs {
		devs[r] = newDev()
	}
	comms, err := engines(devs)
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*recorder, size)
	ranks := make([]*Trainer, size)
	for r := range size {
		ranks[r] = c.build(t, r, size)
		recs[r] = &recorder{DeviceComm: comms[r]}
		ranks[r].SetDeviceComm(recs[r], c.bucketBytes)
		if err := ranks[r].SetDevice(devs[r]); err != nil {
			t.Fatal(err)
		}
	}
	losses := make([][]float64, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range c.steps {
				st, err := ranks[r].TrainStep()
				if err != nil {
					errs[r] = err
					return
				}
				losses[r] = append(losses[r], st.Loss)
			}
		}()
	}
	wg.Wait()
	var res deviceRanksResult
	res.buckets, res.order, res.swept = ranks[0].Buckets()
	ref := one.hostState(t)
	for r := range size {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		_ = comms[r].Close()
		for i, l := range losses[r] {
			res.worstLoss = max(res.worstLoss, math.Abs(l-want[i])/want[i])
		}
		got := ranks[r].hostState(t)
		res.paramNMSE = max(res.paramNMSE, nmseOf(got[0], ref[0]))
		res.emaNMSE = max(res.emaNMSE, nmseOf(got[1], ref[1]))
		// Every rank started the same buffers in the same order: the buckets as
		// the backward sweep finished them, then the loss (2 slots), each step.
		_, order, _ := ranks[r].Buckets()
		if !slices.Equal(order, res.order) {
			t.Errorf("rank %d started the buckets in order %v, rank 0 in %v", r, order, res.order)
		}
		var step []int
		for _, k := range order {
			step = append(step, res.buckets[k].Hi-res.buckets[k].Lo)
		}
		step = append(step, 2)
		for s := range c.steps {
			if got := recs[r].lens[s*len(step) : (s+1)*len(step)]; !slices.Equal(got, step) {
				t.Errorf("rank %d step %d: buffers of %v elements, want %v", r, s+1, got, step)
			}
		}
	}
	if !(res.worstLoss <= 2.5e-6) || !(res.paramNMSE <= 1e-12) || !(res.emaNMSE <= 1e-12) {
		t.Errorf("%d ranks against one process: losses differ by up to %.3g relative, weights NMSE %.3g, EMA NMSE %.3g (limits 2.5e-6, 1e-12)",
			size, res.worstLoss, res.paramNMSE, res.emaNMSE)
	}
	if len(res.buckets) < 3 {
		t.Errorf("%d buckets: the case should have several", len(res.buckets))
	}
	if res.swept != len(res.buckets) {
		t.Errorf("%d of %d buckets started during the backward sweep", res.swept, len(res.buckets))
	}
	if c.backward {
		for i, k := range res.order {
			if k != i {
				t.Errorf("buckets started in order %v; a stack of layers finishes the last parameters first (0, 1, …)", res.order)
				break
			}
		}
	}
	t.Logf("%s, %d ranks: %d buckets %v started in order %v (%d during the sweep); worst loss difference %.3g, weights NMSE %.3g, EMA NMSE %.3g",
		c.name, size, len(res.buckets), res.buckets, res.order, res.swept, res.worstLoss, res.paramNMSE, res.emaNMSE)
	return res
}

// hostState downloads and copies the parameters and EMA weights.
func (t *Trainer) hostState(tb testing.TB) [2][]float32 {
	tb.Helper()
	if err := t.download(); err != nil {
		tb.Fatal(err)
	}
	return [2][]float32{slices.Clone(t.Params.Data), slices.Clone(t.EMA.Shadow)}
}

// toyDeviceCase is the toy score MLP on the Swiss roll, global batch 24, in
// buckets of at most 4 KiB (a layer each and more).
var toyDeviceCase = deviceCommCase{name: "toy MLP", steps: 8, bucketBytes: 4 << 10, backward: true,
	build: func(t *testing.T, r, size int) *Trainer {
		t.Helper()
		const batch = 24
		sde, src, net, d := toyModel(t, hold.KindHOLD)
		first, n, err := dist.Split(batch, r, size)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := ShardScoreLoss(sde, net, src.Sample, Shard{Global: batch, First: first, Len: n}, d, TimeSampling{Scheme: TimesUniform})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New(Options{Steps: 100, Batch: batch, LR: 1e-3, Warmup: 4, GradClip: 1, EMA: 0.99, Seed: 5}, net.Params, loss)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}}

// tinyDeviceCase is ncsnpp-tiny on random 8×8 RGB images with dropout 0.1
// under HOLD, global batch 6, in buckets of at most 16 KiB.
var tinyDeviceCase = deviceCommCase{name: "ncsnpp-tiny", steps: 3, bucketBytes: 16 << 10,
	build: func(t *testing.T, r, size int) *Trainer {
		t.Helper()
		const batch, dim = 6, 3 * 8 * 8
		sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := layers.NCSNppPreset("ncsnpp-tiny", sde.Blocks()*3, 3, 8)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Dropout = 0.1
		net, err := layers.NewNCSNpp(cfg, tensor.NewRNG(4))
		if err != nil {
			t.Fatal(err)
		}
		tensor.NewRNG(8).FillNormal(net.Params.Data, 0, 0.05)
		images := func(g *rng.RNG, dst []float32) { g.FillUniform(dst, -1, 1) }
		first, n, err := dist.Split(batch, r, size)
		if err != nil {
			t.Fatal(err)
		}
		loss, err := ShardScoreLoss(sde, net, images, Shard{Global: batch, First: first, Len: n}, dim, TimeSampling{Scheme: TimesUniform})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := New(Options{Steps: 100, Batch: batch, LR: 1e-3, GradClip: 1, EMA: 0.9, Seed: 7}, net.Params, loss)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}}

func cpuDev() tensor.Device { return tensor.CPU }

// TestDeviceCommMatchesOne: the toy MLP on 2 and 3 CPU ranks reduced in
// buckets by the in-process device communicator equals one trainer.
func TestDeviceCommMatchesOne(t *testing.T) {
	for _, size := range []int{2, 3} {
		runDeviceRanks(t, toyDeviceCase, size, cpuDev)
	}
}

// TestDeviceCommTinyMatchesOne: ncsnpp-tiny with dropout on 2 and 3 CPU
// ranks equals one trainer.
func TestDeviceCommTinyMatchesOne(t *testing.T) {
	for _, size := range []int{2, 3} {
		runDeviceRanks(t, tinyDeviceCase, size, cpuDev)
	}
}

// TestDeviceCommFailure: rank 1 of 3 fails at step 3 (an injected error in
// its loss function, before its reductions); the others, waiting in the
// step's reductions, stop with an error naming rank 1 within seconds, and
// their parameters are those of step 2 or 3 (a step whose reductions failed
// changes nothing). Checkpoint-free: the run loop ends there (EndRanks).
func TestDeviceCommFailure(t *testing.T) {
	const size, failAt = 3, 2
	comms, _ := dist.NewLocalDevice(size)
	injected := errors.New("injected failure")
	errs := make([]error, size)
	stopped := make([]time.Duration, size)
	var failedAt time.Time
	var mu sync.Mutex
	var wg sync.WaitGroup
	for r := range size {
		tr := toyDeviceCase.build(t, r, size)
		if r == 1 {
			loss := tr.loss
			tr.loss = func(c *StepContext) (v *autograd.Value, err error) {
				if c.Step == failAt {
					mu.Lock()
					failedAt = time.Now()
					mu.Unlock()
					return nil, injected
				}
				return loss(c)
			}
		}
		tr.SetDeviceComm(comms[r], toyDeviceCase.bucketBytes)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if _, errs[r] = tr.TrainStep(); errs[r] != nil {
					break
				}
			}
			mu.Lock()
			stopped[r] = time.Since(failedAt)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if !errors.Is(errs[1], injected) {
		t.Errorf("rank 1: %v, want the injected error", errs[1])
	}
	for _, r := range []int{0, 2} {
		var pe *dist.PeerError
		if !errors.As(errs[r], &pe) || pe.Rank != 1 || !errors.Is(errs[r], dist.ErrPeer) {
			t.Errorf("rank %d: %v, want a PeerError of rank 1", r, errs[r])
		}
		if !(stopped[r] <= 2*time.Second) {
			t.Errorf("rank %d stopped %v after rank 1 failed", r, stopped[r])
		}
		t.Logf("rank %d stopped %v after rank 1 failed: %v", r, stopped[r], errs[r])
	}
}
