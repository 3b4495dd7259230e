package experiment

import (
	"context"
	"fmt"
	"io"
	"time"

	"holdgo/hold"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// DemoRun is holdctl demo after its flags are read: its settings and the command's hooks.
type DemoRun struct {
	Out      string // the output directory (DemoDir)
	Steps    int    // training steps
	L, Alpha float64
	N, NFE   int    // samples drawn (and fresh data points compared with); the sampler's evaluations
	Sampler  string // the sampler method (DemoSamplerSpec)
	Seed     uint64
	Times    string // training-time sampling
	LR       float64
	Fourier  int
	Force    bool   // replace the samples' files even if they hold another kind of file
	Device   string // --device, opened by Open after the output directory is made
	Open     func(name string) (tensor.Device, error)
	Prog     string // the program, in the message that ends every rank and in the resume hint
	// Notify returns the training's context, which a stop signal ends, and its release; called once
	// the device is open.
	Notify func() (context.Context, func())
	Fix    func(error) error // as DemoTraining.Fix
	// On returns the sampler's function on Device for the trained model; its errors are the command's.
	On func(s *sample.Sampler, m *train.Model) (sample.Func, error)
}

// RunDemo checks the sampler, HOLD's parameters, the memory budget and the training's configuration,
// prepares the output directory, trains (TrainDemo, progress on log), samples, writes the samples'
// picture and .npy, scores them (ScoreDemo) and reports on w. Errors of the settings and inputs are
// InputErrors; the others are as TrainDemo, On and the rest return them.
func RunDemo(r DemoRun, w, log io.Writer) error {
	spec := DemoSamplerSpec(r.Sampler, r.NFE)
	if _, err := sample.StepsFor(spec.Method, spec.NFE, spec.Denoise); err != nil {
		return inputErr("demo: --sampler/--nfe: %v", err)
	}
	hc := hold.DefaultConfig(hold.KindHOLD)
	hc.L, hc.Alpha = r.L, r.Alpha
	if err := hc.Validate(); err != nil { // before anything is written
		return inputErr("demo: %v", err)
	}
	begin := time.Now()
	dir, n := r.Out, r.N
	if err := budget.CheckCount(int64(n)*3, 2*8*8, "--n"); err != nil { // the state of every sample, float64, with scratch
		return &InputError{err}
	}
	cfg := train.DemoConfig(r.Steps, r.Seed, r.Times, r.LR, r.Fourier, r.L, r.Alpha)
	if err := cfg.Validate(); err != nil { // --lr, --times: before the run directory is made
		return inputErr("demo: %v", err)
	}
	png, npy, runDir, lock, err := DemoDir(dir, outpath.New(r.Force))
	if err != nil {
		return inputErr("demo: %v", err)
	}
	defer lock.Release()
	fmt.Fprintf(w, "%s demo: HOLD-%d (L=%g, α=%g, T=7) on the multi Swiss roll, %d steps, batch %d\n",
		r.Prog, cfg.Order, cfg.L, cfg.Alpha, cfg.Steps, cfg.Batch)
	dev, err := r.Open(r.Device)
	if err != nil {
		return inputErr("demo: %v", err)
	}
	ctx, stop := r.Notify()
	defer stop()
	m, err := TrainDemo(ctx, DemoTraining{Config: cfg, Device: dev, Prog: r.Prog,
		Session: train.Session{Dir: runDir, Out: log},
		ResumeHint: func(ranks int) string {
			return fmt.Sprintf("%s train --resume --out %s --local-ranks %d finishes the training (%s demo starts over)", r.Prog, runDir, ranks, r.Prog)
		},
		Fix: r.Fix})
	if err != nil {
		return err
	}
	trained := time.Since(begin)
	smp, err := spec.Build(m.SDE, m.Score, 2)
	if err != nil {
		return inputErr("demo: %v", err)
	}
	run, err := r.On(smp, m)
	if err != nil {
		return err
	}
	q, res, sampled, err := DemoSample(smp, run, DemoRanksOn(dev), n, cfg.Seed+1)
	if err != nil {
		return err
	}
	if err := WriteDemoSamples(png, npy, q, n, fmt.Sprintf("HOLD-3, sampler %s, NFE %d, %d samples", spec.Method, res.NFE, n)); err != nil {
		return err
	}

	sample.WarnDiverged(log, res.Diverged, n, "the picture and the distances below leave them out")
	q, _ = sample.ConvergedRows(q, 2)
	sc, err := ScoreDemo(q, m.Source, n, cfg.Seed+2)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "sampled %d points with sampler %s (NFE %d) in %.1fs; picture: %s\n", n, spec.Method, res.NFE, sampled.Seconds(), png)
	sc.WriteText(w, len(q)/2, n)
	fmt.Fprintf(w, "time: training %.0fs, total %.0fs\n", trained.Seconds(), time.Since(begin).Seconds())
	return nil
}
