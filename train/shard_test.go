package train

import (
	"errors"
	"math"
	"sync"
	"testing"

	"holdgo/autograd"
	"holdgo/data"
	"holdgo/dist"
	"holdgo/hold"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
)

// shardCase is a score-matching problem whose batch is split over ranks.
type shardCase struct {
	name      string
	data      string
	objective string
	times     string
	batch     int
	edm       bool // EDM's preconditioning (ShardEDMLoss)
}

// loss is the case's shard loss.
func (c shardCase) loss(sde *hold.SDE, net layers.ScoreNet, src data.Source, shard Shard) (LossFunc, error) {
	f := ShardScoreLoss
	if c.edm {
		f = ShardEDMLoss
	}
	return f(sde, net, src.Sample, shard, src.Dimension(), TimeSampling{Scheme: c.times})
}

var shardCases = []shardCase{
	{"swissroll bcsm uniform", "swissroll", hold.ObjectiveBCSM, TimesUniform, 12, false},
	// gmm1d: 3 values of noise per sample, so shards start at odd noise elements; DSM draws the
	// auxiliary noise too; mixed times depend on the global index's parity.
	{"gmm1d dsm mixed", "gmm1d", hold.ObjectiveDSM, TimesMixed, 9, false},
	// σ-matched times and EDM's preconditioning: the input and target come from the same draws.
	{"swissroll edm sigma:edm", "swissroll", hold.ObjectiveBCSM, "sigma:edm", 9, true},
}

func (c shardCase) build(t *testing.T) (*hold.SDE, data.Source, *layers.MLP) {
	t.Helper()
	cfg := hold.DefaultConfig(hold.KindHOLD)
	cfg.Objective = c.objective
	sde, err := hold.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	src, err := data.Open(c.data, data.DefaultSwissNoise)
	if err != nil {
		t.Fatal(err)
	}
	d := src.Dimension()
	net, err := layers.NewMLP(layers.MLPConfig{In: sde.Blocks()*d + 1, Hidden: 24, Out: d, Layers: 3}, tensor.NewRNG(3))
	if err != nil {
		t.Fatal(err)
	}
	return sde, src, net
}

// gradientOf runs loss at step 4 of seed 9 (the data stream seeded 17) and
// returns the loss and a copy of the parameters' gradient.
func gradientOf(t *testing.T, loss LossFunc, p *layers.Params) (float64, []float32) {
	t.Helper()
	g := autograd.NewTape(tensor.CPU)
	p.ZeroGrad()
	c := &StepContext{Tape: g, RNG: tensor.NewRNG(17), Seed: 9, Step: 4, Device: tensor.CPU, Stats: tensor.Zeros(tensor.StatsLen)}
	out, err := loss(c)
	if err != nil {
		t.Fatal(err)
	}
	g.BackwardFrom(out)
	value, _, _, err := tensor.ReadStats(c.Stats)
	if err != nil {
		t.Fatal(err)
	}
	return value, append([]float32(nil), p.Grad...)
}

// TestShardGradientsSumToWhole: the gradients (and losses) of the shards of
// a batch, summed in float64, are the whole batch's gradient computed in one
// piece, for 1, 3 and a batch's worth of ranks. Only the float32 summation
// order of the weight gradients differs (≈1e-7 relative).
func TestShardGradientsSumToWhole(t *testing.T) {
	for _, c := range shardCases {
		t.Run(c.name, func(t *testing.T) {
			sde, src, net := c.build(t)
			whole, err := c.loss(sde, net, src, Shard{Global: c.batch, Len: c.batch})
			if err != nil {
				t.Fatal(err)
			}
			wantLoss, want := gradientOf(t, whole, net.Params)
			scale := 0.0
			for _, v := range want {
				scale = max(scale, math.Abs(float64(v)))
			}
			for _, size := range []int{1, 3, c.batch} {
				sum, sumLoss := make([]float64, len(want)), 0.0
				for r := range size {
					first, n, err := dist.Split(c.batch, r, size)
					if err != nil {
						t.Fatal(err)
					}
					part, err := c.loss(sde, net, src, Shard{Global: c.batch, First: first, Len: n})
					if err != nil {
						t.Fatal(err)
					}
					l, g := gradientOf(t, part, net.Params)
					sumLoss += l
					for i, v := range g {
						sum[i] += float64(v)
					}
				}
				worst := 0.0
				for i, v := range sum {
					worst = max(worst, math.Abs(v-float64(want[i])))
				}
				if !(worst <= 1e-5*scale) || !(math.Abs(sumLoss-wantLoss) <= 1e-6*wantLoss) {
					t.Errorf("%d ranks: gradient off by %.3g (largest element %.3g), loss %.9g, whole batch %.9g",
						size, worst, scale, sumLoss, wantLoss)
				}
				t.Logf("%d ranks: max |Σ shards − whole| = %.3g of %.3g, loss %.9g vs %.9g", size, worst, scale, sumLoss, wantLoss)
			}
		})
	}
}

// TestShardDropoutGradientsSumToWhole: ncsnpp-tiny with dropout 0.1 on 8×8 images, batch 4: the
// shards' gradients summed in float64 are the whole batch's, so each sample keeps its masks
// whatever rank holds it.
func TestShardDropoutGradientsSumToWhole(t *testing.T) {
	const batch, size = 4, 2
	sde, err := hold.New(hold.DefaultConfig(hold.KindHOLD))
	if err != nil {
		t.Fatal(err)
	}
	n := sde.Blocks()
	cfg, err := layers.NCSNppPreset("ncsnpp-tiny", n*3, 3, 8)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Dropout = 0.1
	net, err := layers.NewNCSNpp(cfg, tensor.NewRNG(4))
	if err != nil {
		t.Fatal(err)
	}
	// Random weights: at initialisation the convolution after each dropout is zero (NCSN++'s
	// init_scale 0), which would hide the masks.
	tensor.NewRNG(8).FillNormal(net.Params.Data, 0, 0.05)
	images := func(r *rng.RNG, dst []float32) { r.FillUniform(dst, -1, 1) }
	const dim = 3 * 8 * 8
	whole, err := ScoreLoss(sde, net, images, batch, dim, TimeSampling{Scheme: TimesUniform})
	if err != nil {
		t.Fatal(err)
	}
	wantLoss, want := gradientOf(t, whole, net.Params)
	// Without the offset the shards would reuse the first samples' masks: check that the masks matter.
	net.Config.Dropout = 0
	_, noDrop := gradientOf(t, whole, net.Params)
	net.Config.Dropout = 0.1
	scale, masks := 0.0, 0.0
	for i, v := range want {
		scale = max(scale, math.Abs(float64(v)))
		masks = max(masks, math.Abs(float64(v)-float64(noDrop[i])))
	}
	sum, sumLoss := make([]float64, len(want)), 0.0
	for r := range size {
		first, local, err := dist.Split(batch, r, size)
		if err != nil {
			t.Fatal(err)
		}
		part, err := ShardScoreLoss(sde, net, images, Shard{Global: batch, First: first, Len: local}, dim, TimeSampling{Scheme: TimesUniform})
		if err != nil {
			t.Fatal(err)
		}
		l, g := gradientOf(t, part, net.Params)
		sumLoss += l
		for i, v := range g {
			sum[i] += float64(v)
		}
	}
	worst := 0.0
	for i, v := range sum {
		worst = max(worst, math.Abs(v-float64(want[i])))
	}
	if !(worst <= 1e-5*scale) || !(math.Abs(sumLoss-wantLoss) <= 1e-6*wantLoss) || !(masks > 1e3*worst) || !(masks > 1e-3*scale) {
		t.Errorf("gradient off by %.3g (largest element %.3g; dropout changes it by %.3g), loss %.9g, whole batch %.9g",
			worst, scale, masks, sumLoss, wantLoss)
	}
	t.Logf("2 ranks, dropout 0.1: max |Σ shards − whole| = %.3g of %.3g (dropout changes the gradient by %.3g), loss %.9g vs %.9g",
		worst, scale, masks, sumLoss, wantLoss)
}

// TestDataParallelTrainerMatchesOne: three trainers joined by an in-process
// communicator, each holding a third of the batch, train like one trainer
// with the whole batch. Ranks 1 and 2 start from other weights, so the
// agreement also needs the broadcast of rank 0's state.
func TestDataParallelTrainerMatchesOne(t *testing.T) {
	const steps, size = 6, 3
	c := shardCases[1]
	opt := Options{Steps: steps, Batch: c.batch, LR: 1e-2, Warmup: 2, GradClip: 1, EMA: 0.9, Seed: 9}
	sde, src, net := c.build(t)
	loss, err := ScoreLoss(sde, net, src.Sample, c.batch, src.Dimension(), TimeSampling{Scheme: c.times})
	if err != nil {
		t.Fatal(err)
	}
	one, err := New(opt, net.Params, loss)
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for range steps {
		st, err := one.TrainStep()
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, st.Loss)
	}

	comms, _ := dist.NewLocal(size)
	ranks := make([]*Trainer, size)
	losses := make([][]float64, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		sde, src, net := c.build(t)
		if r > 0 {
			tensor.NewRNG(uint64(100+r)).FillNormal(net.Params.Data, 0, 1) // other weights: the broadcast must fix them
		}
		first, n, err := dist.Split(c.batch, r, size)
		if err != nil {
			t.Fatal(err)
		}
		part, err := ShardScoreLoss(sde, net, src.Sample, Shard{Global: c.batch, First: first, Len: n}, src.Dimension(), TimeSampling{Scheme: c.times})
		if err != nil {
			t.Fatal(err)
		}
		if ranks[r], err = New(opt, net.Params, part); err != nil {
			t.Fatal(err)
		}
		ranks[r].SetComm(comms[r])
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			tr := ranks[r]
			if errs[r] = tr.Broadcast(); errs[r] != nil {
				return
			}
			for range steps {
				st, err := tr.TrainStep()
				if err != nil {
					errs[r] = err
					return
				}
				losses[r] = append(losses[r], st.Loss)
			}
		}(r)
	}
	wg.Wait()
	for r := range size {
		if errs[r] != nil {
			t.Fatalf("rank %d: %v", r, errs[r])
		}
		for i, l := range losses[r] {
			if !(math.Abs(l-want[i]) <= 1e-5*want[i]) {
				t.Errorf("rank %d step %d: loss %.9g, one process %.9g", r, i+1, l, want[i])
			}
		}
		for _, b := range [][2][]float32{{ranks[r].Params.Data, one.Params.Data}, {ranks[r].EMA.Shadow, one.EMA.Shadow}, {ranks[r].Adam.V, one.Adam.V}} {
			if e := nmseOf(b[0], b[1]); !(e < 1e-10) {
				t.Errorf("rank %d: state NMSE %.3g against one process", r, e)
			}
		}
	}
	t.Logf("last loss %.9g (one process %.9g), rank-0 parameter NMSE %.3g", losses[0][steps-1], want[steps-1], nmseOf(ranks[0].Params.Data, one.Params.Data))
}

// TestDataParallelNonFinite: a loss that is not finite on one rank stops
// every rank at the same step with ErrNonFinite, the parameters untouched.
func TestDataParallelNonFinite(t *testing.T) {
	const size = 2
	comms, _ := dist.NewLocal(size)
	errs := make([]error, size)
	before := make([][]float32, size)
	after := make([][]float32, size)
	var wg sync.WaitGroup
	for r := range size {
		m, err := layers.NewMLP(layers.MLPConfig{In: 1, Hidden: 8, Out: 1, Layers: 2}, tensor.NewRNG(5))
		if err != nil {
			t.Fatal(err)
		}
		fit := regression(m)
		loss := func(c *StepContext) (*autograd.Value, error) {
			v, err := fit(c)
			if r == 1 && c.Step == 2 {
				v.T.Data()[0] = float32(math.NaN())
			}
			return v, err
		}
		tr, err := New(Options{Steps: 5, Batch: 32, LR: 1e-2, Seed: 1}, m.Params, loss)
		if err != nil {
			t.Fatal(err)
		}
		tr.SetComm(comms[r])
		wg.Add(1)
		go func(r int) {
			defer wg.Done()
			for range 5 {
				before[r] = append([]float32(nil), tr.Params.Data...)
				if _, errs[r] = tr.TrainStep(); errs[r] != nil {
					after[r] = tr.Params.Data
					return
				}
			}
		}(r)
	}
	wg.Wait()
	for r := range size {
		if !errors.Is(errs[r], ErrNonFinite) {
			t.Fatalf("rank %d: %v, want ErrNonFinite at step 3", r, errs[r])
		}
		if nmseOf(after[r], before[r]) != 0 {
			t.Errorf("rank %d: the non-finite step changed the parameters", r)
		}
	}
	t.Logf("rank 0: %v", errs[0])
}

func nmseOf(got, want []float32) float64 {
	var num, den float64
	for i := range got {
		d := float64(got[i]) - float64(want[i])
		num += d * d
		den += float64(want[i]) * float64(want[i])
	}
	return num / max(den, 1e-300)
}
