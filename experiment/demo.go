package experiment

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"holdgo/data"
	"holdgo/dist"
	"holdgo/hold"
	"holdgo/internal/outpath"
	"holdgo/internal/parallel"
	"holdgo/internal/runlock"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// holdctl demo after its flag checks: the output directory (DemoDir), the training on local ranks
// (TrainDemo), the sampler, the draw of the trained model, the files and the report of the scores
// (ScoreDemo).

// DemoDir prepares the demo's output directory dir (made if missing; a file or a run directory of
// holdctl train is refused): the paths of its samples' picture and .npy, which guard must let it
// write, and a fresh run directory in it (train.FreshRunDir: nothing there is removed or replaced),
// locked. Every error is about the input.
func DemoDir(dir string, guard *outpath.Guard) (png, npy, runDir string, lock *runlock.Lock, err error) {
	png, npy = filepath.Join(dir, "samples.png"), filepath.Join(dir, "samples.npy")
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return "", "", "", nil, fmt.Errorf("--out %s is a file, not a directory", dir)
	}
	if outpath.IsRunDir(dir) {
		return "", "", "", nil, fmt.Errorf("--out %s is a run directory of holdctl train; give another directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", "", nil, err
	}
	if err := guard.Check(png, outpath.PNG); err != nil {
		return "", "", "", nil, err
	}
	if err := guard.Check(npy, outpath.NPY); err != nil {
		return "", "", "", nil, err
	}
	runDir, lock, err = train.FreshRunDir(dir)
	return png, npy, runDir, lock, err
}

// DemoTraining is the training half of holdctl demo.
type DemoTraining struct {
	Config train.RunConfig // train.DemoConfig; TrainDemo sets its ranks
	Device tensor.Device
	// Session holds the fresh run directory and the progress writer (rank 0's); TrainDemo gives each
	// rank a copy with the run's log, the configuration, the resume hint, its trainer and communicator.
	Session    train.Session
	Prog       string                 // the program, in the message that ends every rank (train.EndRanks)
	ResumeHint func(ranks int) string // how to finish an interrupted training; called by every rank, concurrently
	// Fix turns a rank's error, the trainer's refusal of Device (a *DeviceError) or the training loop's,
	// into the command's.
	Fix func(error) error
}

// DeviceError is the trainer's refusal of the device.
type DeviceError struct{ Err error }

func (e *DeviceError) Error() string { return e.Err.Error() }
func (e *DeviceError) Unwrap() error { return e.Err }

// DemoRanksOn is how many local ranks the demo trains and samples on with dev: train.DemoRanks where
// dev's memory is the host's (the CPU, the Reference: tensor.HostResident), one on another device.
func DemoRanksOn(dev tensor.Device) int {
	if !tensor.HostResident(dev) {
		return 1
	}
	return train.DemoRanks
}

// TrainDemo trains t.Config on DemoRanksOn(t.Device) local ranks, logging to the run directory's log
// file: each rank its shard of the batch, its trainer (rank 0's state broadcast) and the session's loop
// (rank 0 logs and writes the checkpoint). It returns the trained model with its EMA weights, as every
// diffusion model is evaluated, or rank 0's error.
func TrainDemo(ctx context.Context, t DemoTraining) (*train.Model, error) {
	log, err := train.OpenLog(filepath.Join(t.Session.Dir, train.LogFile), 0)
	if err != nil {
		return nil, err
	}
	defer log.Close()
	ranks := DemoRanksOn(t.Device)
	cfg := t.Config
	cfg.Ranks = ranks
	err = train.LocalRanks(ranks, t.Prog, func(comm dist.Communicator) error {
		tr, err := cfg.NewTrainer(comm)
		if err != nil {
			return err
		}
		if err := tr.Broadcast(); err != nil {
			return err
		}
		if err := tr.SetDevice(t.Device); err != nil {
			return t.Fix(&DeviceError{err})
		}
		s := t.Session
		s.Log, s.Config, s.ResumeHint, s.Trainer, s.Comm = log, cfg, t.ResumeHint(ranks), tr, comm
		return t.Fix(s.Loop(ctx, 1000))
	})
	if err != nil {
		return nil, err
	}
	return train.LoadModel(t.Session.Dir, false, "")
}

// DemoSamplerSpec is the demo's sampler: method at nfe network evaluations on its preferred grid (the
// quadratic grid to ε = 1e-3; for the aligned samplers a σ-grid to σ_min); the x̂₀ and aligned
// samplers finish with their read-out step, inside the budget.
func DemoSamplerSpec(method string, nfe int) sample.Spec {
	return sample.Spec{Method: method, NFE: nfe, Grid: sample.PreferredGrid(method), End: hold.DefaultEndTime(hold.KindHOLD), Denoise: sample.HasReadout(method)}
}

// DemoSample draws n samples with s through draw (s's sampling function on its device) from seed and
// returns their data block (n rows of 2-D points), the result and how long the draw took. With
// ranks > 1 the samples go, as in training, in chunks of train.DemoSampleChunk to ranks workers of one
// thread each (a chunk's activations stay in its core's cache): each worker with a fork of the network
// scorer where the sampler integrates on the host, with its own tape and state where the state lives
// on the CPU device (lt, em: sample.Sampler.EachOn).
func DemoSample(s *sample.Sampler, draw func(n int, seed uint64) (*sample.Result, error), ranks, n int, seed uint64) ([]float32, *sample.Result, time.Duration, error) {
	threads := parallel.Threads()
	if ranks > 1 {
		s.MaxBatch, s.Workers, threads = train.DemoSampleChunk, ranks, 1
	}
	start := time.Now()
	prev := parallel.SetThreads(threads)
	res, err := draw(n, seed)
	parallel.SetThreads(prev)
	if err != nil {
		return nil, nil, 0, err
	}
	return sample.FirstBlock(res.X, n, s.SDE.Blocks(), 2), res, time.Since(start), nil
}

// WriteDemoSamples writes the n 2-D samples q as a picture titled title (WriteSamples) and as a .npy
// of shape (n, 2).
func WriteDemoSamples(png, npy string, q []float32, n int, title string) error {
	if err := WriteSamples(png, q, 2, title); err != nil {
		return err
	}
	return data.WriteNPY32(npy, q, n, 2)
}

// WriteText prints the scores of samples converged samples against fresh data sets of n points: the
// sliced Wasserstein-2 distance, the floor and their ratio, and precision and recall when measured.
func (sc *DemoScores) WriteText(w io.Writer, samples, n int) {
	fmt.Fprintf(w, "sliced Wasserstein-2 (%d projections, mean ± s.e. over %d fresh data sets of %d points):\n", DemoProjections, DemoReps, n)
	fmt.Fprintf(w, "  %d samples vs fresh data:                 %s\n", samples, sc.SW)
	fmt.Fprintf(w, "  two independent data sets of %d points:  %s   (ratio %.2f)\n", n, sc.Floor, sc.SW.Mean/sc.Floor.Mean)
	if sc.PR != nil {
		fmt.Fprint(w, sc.PR.Text())
	}
}
