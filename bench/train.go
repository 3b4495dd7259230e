package bench

import (
	"fmt"
	"io"
	"sort"
	"time"

	"holdgo/cuda"
	"holdgo/hold"
	"holdgo/internal/budget"
	"holdgo/layers"
	"holdgo/rng"
	"holdgo/tensor"
	"holdgo/train"
)

// TrainBench is what bench train measured.
type TrainBench struct {
	Device, Model     string
	Params, Batch     int
	StepSeconds       float64
	Counted           bool          // the device counts launches, syncs and copies
	Step, LoggingStep cuda.Counters // per non-logging step (averaged over the timed steps) and one logging step

	// On the recording device (cuda.NewRecordingDevice: nothing runs, StepSeconds is the host's
	// time to issue a step): the counts of a non-logging step (the mean of the timed steps) and of a
	// logging step, whether every timed step recorded the same counts, and the arithmetic the
	// device was set to (cuda.Device.Precision: tf32, bf16 or strict).
	Recorded              bool
	RecordStep, RecordLog cuda.RecordStats
	Steady                bool
	Precision             string

	// Profile: one more non-logging step with every call timed alone on the device (Counting's
	// profile, by kernel), when asked for and the device can time.
	Profile map[string]cuda.ProfileEntry
}

// CountingDevice returns dev, or for a CUDA device the same GPU behind a cuda.Counting that counts
// kernel launches, synchronisations and copies (nil for other devices).
func CountingDevice(dev tensor.Device) (tensor.Device, *cuda.Counting) {
	if cd, ok := dev.(*cuda.Device); ok && recorder(dev) == nil { // the recorder counts for itself
		return cuda.NewCountingDevice(cd.Backend())
	}
	return dev, nil
}

// Train times steps training steps (after one warm-up step) of a score network (model "mlp", the toy
// network on 2-D points, or an NCSN++ preset on images of channels channels) for the default SDE of
// sdeKind at batch (0: 512 for mlp, 4 for ncsnpp) on dev; with counting (CountingDevice) it also counts
// what a non-logging and a logging step cost on the device, and with profile times one more
// non-logging step call by call (TrainBench.Profile).
func Train(dev tensor.Device, counting *cuda.Counting, model, sdeKind string, batch, steps, channels int, profile bool) (*TrainBench, error) {
	hc := hold.DefaultConfig(sdeKind)
	sde, err := hold.New(hc)
	if err != nil {
		return nil, err
	}
	n := sde.Blocks()
	var net layers.ScoreNet
	dim := 2
	if model == "mlp" {
		if batch == 0 {
			batch = 512
		}
		if net, err = layers.NewMLP(layers.ToyScoreNet(n*dim, dim), rng.New(1)); err != nil {
			return nil, err
		}
	} else {
		if batch == 0 {
			batch = 4
		}
		size := map[string]int{"ncsnpp-tiny": 8, "ncsnpp-small": 28, "ncsnpp-cifar10": 32, "ncsnpp-celebahq256": 256}[model]
		cfg, err := layers.NCSNppPreset(model, n*channels, channels, size)
		if err != nil {
			return nil, err
		}
		if tensor.HostResident(dev) { // a device holds the activations in its own memory
			if err := budget.Check(int64(min(cfg.TrainBytes(batch), 1<<62)), fmt.Sprintf("a training step of %s at batch %d on the CPU (estimated)", model, batch)); err != nil {
				return nil, err
			}
		}
		m, err := layers.NewNCSNpp(cfg, rng.New(1))
		if err != nil {
			return nil, err
		}
		net, dim = m, channels*size*size
	}
	data := func(r *rng.RNG, dst []float32) { r.FillNormal(dst, 0, 0.5) }
	loss, err := train.ScoreLoss(sde, net, data, batch, dim, train.TimeSampling{Scheme: train.TimesUniform})
	if err != nil {
		return nil, err
	}
	tr, err := train.New(train.Options{Steps: steps + 2, Batch: batch, LR: 1e-4, GradClip: 1, EMA: 0.999, Seed: 1}, net.Parameters(), loss)
	if err != nil {
		return nil, err
	}
	if err := tr.SetDevice(dev); err != nil {
		return nil, err
	}
	res := &TrainBench{Device: dev.Name(), Model: model, Params: tr.Params.Len(), Batch: batch, Counted: counting != nil}
	if _, err := tr.Advance(true); err != nil { // warm-up: buffers allocated, kernels loaded
		return nil, err
	}
	if rec := recorder(dev); rec != nil {
		return res, record(res, tr, rec, dev.(*cuda.Device), steps)
	}
	var before cuda.Counters
	if counting != nil {
		before = counting.Counters()
	}
	start := time.Now()
	for range steps {
		if _, err := tr.Advance(false); err != nil {
			return nil, err
		}
	}
	if _, err := tr.Read(); err != nil { // wait for the device: the timed steps did not
		return nil, err
	}
	res.StepSeconds = time.Since(start).Seconds() / float64(steps)
	if counting != nil {
		after := counting.Counters()
		res.Step = perStep(after.Sub(before), steps)
		// Read's synchronisation belongs to the logging step below, not to these.
		res.Step.DtoH, res.Step.DtoHBytes = 0, 0
		before = counting.Counters()
		if _, err := tr.Advance(true); err != nil {
			return nil, err
		}
		res.LoggingStep = counting.Counters().Sub(before)
		if profile {
			if err := counting.StartProfile(); err != nil {
				return nil, err
			}
			_, err := tr.Advance(false)
			prof := counting.StopProfile()
			if err != nil {
				return nil, err
			}
			res.Profile = prof
		}
	}
	return res, nil
}

// perStep divides the counts of steps steps (rounding to the nearest).
func perStep(c cuda.Counters, steps int) cuda.Counters {
	div := func(v int) int { return (v + steps/2) / steps }
	r := cuda.Counters{Launches: div(c.Launches), Gemms: div(c.Gemms), Syncs: div(c.Syncs), HtoD: div(c.HtoD), DtoH: div(c.DtoH),
		DtoD: div(c.DtoD), HtoDBytes: c.HtoDBytes / int64(steps), DtoHBytes: c.DtoHBytes / int64(steps), LaunchesByKernel: map[string]int{}}
	for k, v := range c.LaunchesByKernel {
		r.LaunchesByKernel[k] = div(v)
	}
	return r
}

// WriteTrain prints what Train measured over steps steps.
func WriteTrain(w io.Writer, r *TrainBench, steps int) {
	fmt.Fprintf(w, "bench train: %s, %d parameters, batch %d, device %s, %d timed steps\n", r.Model, r.Params, r.Batch, r.Device, steps)
	fmt.Fprintf(w, "  %.3f ms/step, %.1f samples/s\n", 1e3*r.StepSeconds, float64(r.Batch)/r.StepSeconds)
	if !r.Counted {
		return
	}
	fmt.Fprintf(w, "  per non-logging step: %d kernel launches, %d host synchronisations, %d H→D copies (%d bytes), %d D→H copies\n",
		r.Step.Launches+r.Step.Gemms, r.Step.HostSyncs(), r.Step.HtoD, r.Step.HtoDBytes, r.Step.DtoH)
	fmt.Fprintf(w, "  logging step:         %d kernel launches, %d host synchronisations, %d H→D copies (%d bytes), %d D→H copies (%d bytes)\n",
		r.LoggingStep.Launches+r.LoggingStep.Gemms, r.LoggingStep.HostSyncs(), r.LoggingStep.HtoD, r.LoggingStep.HtoDBytes,
		r.LoggingStep.DtoH, r.LoggingStep.DtoHBytes)
	type kv struct {
		k string
		v int
	}
	var l []kv
	for k, v := range r.Step.LaunchesByKernel {
		l = append(l, kv{k, v})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].v > l[j].v || (l[i].v == l[j].v && l[i].k < l[j].k) })
	fmt.Fprintf(w, "  launches per step by kernel:")
	for _, e := range l {
		fmt.Fprintf(w, " %s %d", e.k, e.v)
	}
	fmt.Fprintln(w)
}

// WriteProfile prints a profiled step (TrainBench.Profile): the device time by kernel family with its
// bytes, GB/s and (GEMM-like families) TFLOP/s, then the 15 slowest kernels; stepSeconds (the timed
// steps' wall time per step, 0 if unknown) is printed beside the profile's total for comparison.
// Each call was timed alone, so the total is the sum of the device's busy times, without overlap.
func WriteProfile(w io.Writer, prof map[string]cuda.ProfileEntry, stepSeconds float64) {
	type row struct {
		name string
		cuda.ProfileEntry
	}
	fams := map[string]*row{}
	var kernels []row
	var total row
	for name, e := range prof {
		kernels = append(kernels, row{name, e})
		f := fams[e.Family]
		if f == nil {
			f = &row{name: e.Family}
			fams[e.Family] = f
		}
		for _, r := range []*row{f, &total} {
			r.Calls += e.Calls
			r.Seconds += e.Seconds
			r.Bytes += e.Bytes
			r.FLOPs += e.FLOPs
		}
	}
	var rows []row
	for _, f := range fams {
		rows = append(rows, *f)
	}
	bySeconds := func(l []row) {
		sort.Slice(l, func(i, j int) bool {
			return l[i].Seconds > l[j].Seconds || (l[i].Seconds == l[j].Seconds && l[i].name < l[j].name)
		})
	}
	bySeconds(rows)
	bySeconds(kernels)
	line := func(r row) {
		fmt.Fprintf(w, "  %-34s %7d %10.3f %6.1f %9.2f %8.1f", r.name, r.Calls, 1e3*r.Seconds, 100*r.Seconds/max(total.Seconds, 1e-30),
			float64(r.Bytes)/1e9, float64(r.Bytes)/max(r.Seconds, 1e-30)/1e9)
		if r.FLOPs > 0 {
			fmt.Fprintf(w, " %8.1f", float64(r.FLOPs)/max(r.Seconds, 1e-30)/1e12)
		}
		fmt.Fprintln(w)
	}
	header := func(what string) {
		fmt.Fprintf(w, "  %-34s %7s %10s %6s %9s %8s %8s\n", what, "calls", "ms", "%", "GB", "GB/s", "TFLOP/s")
	}
	fmt.Fprintln(w, "profile (one non-logging step, every call timed alone between two events: device time without overlap)")
	header("family")
	for _, r := range rows {
		line(r)
	}
	header("slowest kernels")
	for _, r := range kernels[:min(15, len(kernels))] {
		line(r)
	}
	fmt.Fprintf(w, "profiled step: %.3f ms of device time in %d calls, %.2f GB, %.2f TFLOP", 1e3*total.Seconds, total.Calls,
		float64(total.Bytes)/1e9, float64(total.FLOPs)/1e12)
	if stepSeconds > 0 {
		fmt.Fprintf(w, "; the timed steps took %.3f ms each (wall)", 1e3*stepSeconds)
	}
	fmt.Fprintln(w)
}
