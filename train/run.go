package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"holdgo/checkpoint"
	"holdgo/dist"
	"holdgo/hold"
	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
	"holdgo/internal/runlock"
	"holdgo/layers"
	"holdgo/tensor"
)

// The lifecycle of a run directory (holdctl train, demo): prepare (create and lock the directory,
// resolve or resume the configuration), train with log.csv and checkpoints at the configured cadence,
// stop on a signal or a time limit after writing the checkpoint, with every rank of a data-parallel
// run agreeing on when to stop.

// RunOptions configures Run.
type RunOptions struct {
	Dir      string // the run directory
	Resume   bool   // continue the run in Dir from its checkpoint
	LogEvery int    // steps between log.csv rows and plain progress lines
	// Configure resolves the configuration from base: DefaultRunConfig for a new run, the stored one
	// on Resume (where everything but Steps and CkptEvery must stay as stored).
	Configure   func(base RunConfig) (RunConfig, error)
	ForceUnlock bool // take over a lock that names another host (runlock.Options)
	// OpenDevice opens the device to train on; DeviceName names it in messages.
	OpenDevice func() (tensor.Device, error)
	DeviceName string
	// DeviceComm, when set, makes the engine that sums the ranks' gradients in device memory on
	// the opened device (--dist nccl: cuda.OpenNCCL) and a line for rank 0's output saying which;
	// nil: comm's all-reduce of host copies. It is closed when the run ends.
	DeviceComm func(dev tensor.Device, comm dist.Communicator, cfg RunConfig) (dist.DeviceComm, string, error)
	Out        io.Writer // progress and warnings (rank 0's)
}

// Session is a training run bound to its directory. With a communicator
// of several ranks, rank 0 alone writes the directory and the progress.
type Session struct {
	Dir     string
	Config  RunConfig
	Trainer *Trainer
	Log     io.Writer         // log.csv (OpenLog), rank 0's
	Out     io.Writer         // progress
	Comm    dist.Communicator // nil: one process
	// ResumeHint is how the interruption message says to continue ("" :
	// with --resume, as holdctl train).
	ResumeHint string
}

// lead reports whether this process writes the run directory and progress.
func (s *Session) lead() bool { return s.Comm == nil || s.Comm.Rank() == 0 }

// ranks is the number of processes that train.
func (s *Session) ranks() int {
	if s.Comm == nil {
		return 1
	}
	return s.Comm.Size()
}

// preparedRun is what rank 0 (or the one process) makes of the run
// directory before training: the configuration, the checkpoint to resume,
// the directory's lock, and fail, which undoes a directory this run created.
type preparedRun struct {
	cfg  RunConfig
	file *checkpoint.File
	lock *runlock.Lock
	fail func(error) error
}

// Run trains the run of opt.Dir on this rank of comm until its configured steps, a time limit (ctx's
// deadline: the checkpoint is written and Run returns nil) or a signal (ctx cancelled: the checkpoint
// is written and Run returns an ExitError of status 130). Rank 0 prepares the directory (Prepare's
// checks, the lock, config.yaml, log.csv) and shares the configuration; errors of the input are
// ExitErrors of status 2.
func Run(ctx context.Context, comm dist.Communicator, opt RunOptions) error {
	dir, resume := opt.Dir, opt.Resume
	var run preparedRun
	var err error
	started := false // the run has begun to write its directory (config.yaml, log.csv, checkpoints)
	if comm.Rank() == 0 {
		run, err = prepareRun(opt, comm.Size())
		if run.lock != nil {
			// A run refused before it started leaves no lock file it created (the directory
			// keeps what it held); one that started keeps its lock file, emptied.
			defer func() {
				if started {
					run.lock.Release()
				} else {
					run.lock.Undo()
				}
			}()
		}
	}
	cfg, err := shareConfig(comm, run.cfg, err)
	if err != nil {
		return err
	}
	fail := run.fail
	if comm.Rank() != 0 {
		fail = func(err error) error { return err }
		if resume {
			if err := cfg.UseStoredData(dir, ""); err != nil {
				return inputErr("cannot resume: %v", err)
			}
		}
	}
	tr, err := cfg.NewTrainer(comm) // prepareRun checked that the batch splits
	if err != nil {
		return fail(inputErr("%v", err))
	}
	if run.file != nil {
		if err := tr.Restore(run.file); err != nil {
			return inputErr("cannot resume: %v", err)
		}
	}
	if err := tr.Broadcast(); err != nil {
		return err
	}
	dev, err := opt.OpenDevice()
	if err != nil {
		return fail(inputErr("%v", err))
	}
	if tensor.HostResident(dev) && tr.StepBytes > 0 { // in host memory a step's activations must fit the memory budget
		if err := budget.Check(int64(min(tr.StepBytes, 1<<62)), fmt.Sprintf("a training step of %s at batch %d on %s (estimated)", cfg.Model, cfg.Batch/max(1, comm.Size()), dev.Name())); err != nil {
			return fail(inputErr("%v", err))
		}
	}
	if p, ok := dev.(interface{ SetPrecision(string) }); ok { // --precision on a GPU
		p.SetPrecision(cfg.Precision)
	}
	if err := tr.SetDevice(dev); err != nil {
		return fail(inputErr("--device %s: %v", opt.DeviceName, err))
	}
	if opt.DeviceComm != nil {
		dc, line, err := opt.DeviceComm(dev, comm, cfg)
		if err != nil {
			return fail(inputErr("--dist: %v", err))
		}
		defer dc.Close()
		tr.SetDeviceComm(dc, 0)
		if comm.Rank() == 0 && line != "" && opt.Out != nil {
			fmt.Fprintln(opt.Out, line)
		}
	}
	s := &Session{Dir: dir, Config: cfg, Trainer: tr, Out: opt.Out, Comm: comm}
	if s.lead() {
		yml, err := cfg.YAML()
		if err != nil {
			return fail(inputErr("%v", err))
		}
		started = true
		if err := atomicfile.WriteFile(filepath.Join(dir, ConfigFile), yml); err != nil {
			return inputErr("cannot write to the run directory: %v", err)
		}
		log, err := OpenLog(filepath.Join(dir, LogFile), tr.Step)
		if err != nil {
			return inputErr("%v", err)
		}
		defer log.Close()
		s.Log = log
	}
	return s.Loop(ctx, opt.LogEvery)
}

// prepareRun checks the configuration, creates and locks the run directory,
// and resolves the configuration (from opt.Configure, or from the checkpoint
// on opt.Resume) for ranks processes.
func prepareRun(opt RunOptions, ranks int) (preparedRun, error) {
	dir, resume := opt.Dir, opt.Resume
	ckpt := filepath.Join(dir, CheckpointFile)
	var (
		cfg  RunConfig
		file *checkpoint.File
		err  error
		run  preparedRun
	)
	if !resume {
		// Everything the flags say is checked before the directory is touched.
		if cfg, err = opt.Configure(DefaultRunConfig()); err != nil {
			return run, inputErr("%v", err)
		}
		if err := cfg.Validate(); err != nil {
			return run, inputErr("%v", err)
		}
	} else if st, err := os.Stat(dir); err != nil {
		return run, inputErr("cannot resume: %s is not a run directory (%v)", dir, err)
	} else if !st.IsDir() {
		return run, inputErr("cannot resume: %s is not a run directory (not a directory)", dir)
	}
	// A shipped model is refused before anything is written into its directory (no .lock left in it).
	if f, err := checkpoint.Load(ckpt); err == nil && f.Meta[KeyExported] != "" {
		return run, inputErr("%s holds a shipped model (holdctl export: EMA weights only, no optimizer state): it cannot be trained or resumed; train a new run from the data into another --out", dir)
	}
	wasRun := outpath.IsRunDir(dir)
	created, err := makeRunDir(dir)
	if err != nil {
		return run, inputErr("cannot create run directory: %v", err)
	}
	lock, err := runlock.AcquireWith(dir, runlock.Options{ForceUnlock: opt.ForceUnlock})
	if err != nil { // the directory stays even if this call created it: the lock's holder may have found it so
		if errors.Is(err, runlock.ErrLocked) || errors.Is(err, runlock.ErrOtherHost) {
			return run, inputErr("%v", err)
		}
		return run, inputErr("cannot lock the run directory: %v", err)
	}
	run.lock = lock
	if lock.Stale != "" {
		fmt.Fprintf(opt.Out, "warning: took over the stale lock of %s in %s (that process no longer holds it)\n", lock.Stale, dir)
	}
	var removed []string
	if wasRun { // only a run's own temporary files, only in a run directory
		removed, err = atomicfile.RemoveStale(dir, CheckpointFile, ConfigFile, LogFile, DataFile)
	}
	if len(removed) > 0 {
		fmt.Fprintf(opt.Out, "removed stale temporary files of writes that were killed: %s\n", strings.Join(removed, ", "))
	}
	if err != nil {
		return run, inputErr("%s: %v", dir, err)
	}
	// fail undoes what this run added to a directory it created.
	run.fail = func(err error) error {
		if created {
			os.RemoveAll(dir)
		}
		return err
	}
	if resume {
		if cfg, file, err = resumeConfig(opt, ckpt); err != nil {
			return run, err
		}
	} else {
		if _, err := os.Stat(ckpt); err == nil {
			return run, inputErr("%s already holds a run; pass --resume to continue it or choose another --out", dir)
		}
		if cfg.PointFile() {
			if err := cfg.StoreData(dir); err != nil {
				return run, run.fail(inputErr("%v", err))
			}
		}
	}
	cfg.Ranks = ranks
	if _, _, err := dist.Split(cfg.Batch, 0, ranks); err != nil {
		return run, run.fail(inputErr("--batch is the global batch: %v", err))
	}
	if _, err := cfg.Meta(); err != nil { // the checkpoint's metadata must encode before any step is spent
		return run, run.fail(inputErr("%v", err))
	}
	run.cfg, run.file = cfg, file
	return run, nil
}

// makeRunDir creates dir (and its parents) and reports whether this call
// created dir itself.
func makeRunDir(dir string) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return false, err
	}
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, fs.ErrExist) {
		if st, serr := os.Stat(dir); serr == nil && !st.IsDir() {
			return false, fmt.Errorf("%s is a file, not a directory", dir)
		}
		return false, nil
	}
	return err == nil, err
}

// resumeConfig loads the checkpoint of a run and the configuration to
// continue it with: the stored one, with the keys a resume may change
// (steps, ckpt-every) taken from opt.Configure. Any other flag or --config
// key that contradicts the stored run is an error listing every difference.
func resumeConfig(opt RunOptions, ckpt string) (RunConfig, *checkpoint.File, error) {
	dir := opt.Dir
	file, err := checkpoint.Load(ckpt)
	if err != nil {
		return RunConfig{}, nil, inputErr("cannot resume: %v", err)
	}
	stored, err := ConfigFromCheckpoint(file)
	if err != nil {
		return stored, nil, inputErr("cannot resume: %v", err)
	}
	if err := CheckConfigFile(ckpt, stored); err != nil {
		return stored, nil, inputErr("cannot resume: %v", err)
	}
	want, err := opt.Configure(stored)
	if err != nil {
		return stored, nil, inputErr("%v", err)
	}
	if diff := stored.Differences(want, "steps", "ckpt_every", "ranks"); len(diff) > 0 {
		return stored, nil, inputErr("cannot resume %s: the flags contradict the stored run (%s); only --steps, --ckpt-every, "+
			"--log-every, --threads and --time-limit may change on --resume, start a new run (another --out) to change the rest",
			dir, strings.Join(diff, "; "))
	}
	cfg := stored
	cfg.Steps, cfg.CkptEvery = want.Steps, want.CkptEvery
	if err := cfg.Validate(); err != nil {
		return cfg, nil, inputErr("%v", err)
	}
	if err := cfg.UseStoredData(dir, ""); err != nil {
		return cfg, nil, inputErr("cannot resume: %v", err)
	}
	return cfg, file, nil
}

// save writes the checkpoint (rank 0 only: every rank holds the same state).
func (s *Session) save() error {
	if !s.lead() {
		return nil
	}
	meta, err := s.Config.Meta()
	if err != nil {
		return err
	}
	return s.Trainer.Save(filepath.Join(s.Dir, CheckpointFile), meta)
}

// Loop trains from the trainer's step to the configuration's steps, writing a log.csv row every
// logEvery steps and the checkpoint at the configured cadence and at the end; it stops early, with the
// checkpoint written, when ctx ends (see Run).
func (s *Session) Loop(ctx context.Context, logEvery int) error {
	tr, cfg := s.Trainer, s.Config
	out := s.Out
	if !s.lead() {
		out = io.Discard
	}
	ranks := ""
	if s.ranks() > 1 {
		ranks = fmt.Sprintf(", %d ranks (batch %d each)", s.ranks(), cfg.Batch/s.ranks())
	}
	kind := cfg.SDE
	if kind == hold.KindHOLD { // the order means nothing to CLD, VP and VE (their configuration keeps the default)
		kind = fmt.Sprintf("%s (order %d)", kind, cfg.Order)
	}
	fmt.Fprintf(out, "training %s on %s: %d parameters, steps %d→%d, batch %d%s, seed %d, device %s, run dir %s\n",
		kind, cfg.Data, tr.Params.Len(), tr.Step, cfg.Steps, cfg.Batch, ranks, cfg.Seed, tr.Device().Name(), s.Dir)
	if rep, err := cfg.DescribeTimes(); err == nil {
		fmt.Fprintln(out, rep)
	} else {
		fmt.Fprintf(out, "warning: cannot describe the training times: %v\n", err)
	}
	bar := newProgress(out, tr.Step, cfg.Steps, logEvery)
	lastGood := tr.Step
	var lastRead Stats
	window := time.Now()
	windowStart := tr.Step
	rank := 0
	if s.Comm != nil {
		rank = s.Comm.Rank()
	}
	began, firstStep := time.Now(), tr.Step
	for tr.Step < cfg.Steps {
		reason := stopReason(ctx)
		if s.Comm != nil {
			var err error
			if reason, err = agreeStop(s.Comm, reason, tr.Step); err != nil {
				return err
			}
		}
		if reason != runOn {
			bar.finish()
			if err := s.save(); err != nil {
				return fmt.Errorf("interrupted at step %d, and the checkpoint could not be written: %w", tr.Step, err)
			}
			if reason == runDeadline {
				fmt.Fprintf(out, "time limit reached: step %d, checkpoint %s\n", tr.Step, filepath.Join(s.Dir, CheckpointFile))
				return nil
			}
			how := s.ResumeHint
			if how == "" {
				how = "continue with --resume"
			}
			return collective(&ExitError{Err: fmt.Errorf("interrupted: checkpoint of step %d written to %s; %s", tr.Step, s.Dir, how), Status: 130}, rank)
		}
		// On a device the loss and gradient norm are read back (a synchronisation) only when they
		// are logged or a checkpoint is due; a non-finite step in between is skipped there and
		// reported by the next read.
		next := tr.Step + 1
		read := next%logEvery == 0 || next == cfg.Steps || (cfg.CkptEvery > 0 && next%cfg.CkptEvery == 0)
		st, err := tr.Advance(read)
		if read {
			lastRead = st
		} else {
			st.Loss, st.GradNorm = lastRead.Loss, lastRead.GradNorm
		}
		if errors.Is(err, ErrNonFinite) { // every rank meets it at the same step (all-reduced loss)
			bar.finish()
			return collective(&ExitError{Err: fmt.Errorf("training stopped: %v.\nThe last good checkpoint (step %d) is kept in %s. "+
				"Try a lower --lr, gradient clipping (--grad-clip 1) or check the data for NaN/Inf.", err, lastGood, s.Dir), Status: 1}, rank)
		}
		if err != nil {
			bar.finish()
			return err
		}
		if s.lead() && (st.Step%logEvery == 0 || st.Step == cfg.Steps) {
			rate := float64(st.Step-windowStart) / time.Since(window).Seconds()
			window, windowStart = time.Now(), st.Step
			fmt.Fprintf(s.Log, "%d,%.9g,%.6g,%.9g,%.4g\n", st.Step, st.Loss, st.LR, st.GradNorm, rate)
		}
		bar.update(st)
		if (cfg.CkptEvery > 0 && st.Step%cfg.CkptEvery == 0) || st.Step == cfg.Steps {
			if err := s.save(); err != nil {
				bar.finish()
				return fmt.Errorf("write checkpoint: %w", err)
			}
			lastGood = st.Step
		}
	}
	bar.finish()
	fmt.Fprintf(out, "done: step %d, checkpoint %s\n", tr.Step, filepath.Join(s.Dir, CheckpointFile))
	if s.ranks() > 1 && tr.Step > firstStep {
		wall := time.Since(began)
		fmt.Fprintf(out, "rank 0: %.2f ms per step, all-reduce of %d values %.2f ms per step (%.1f%%)\n",
			float64(wall.Microseconds())/1e3/float64(tr.Step-firstStep), tr.Params.Len()+layers.ReduceSlots,
			float64(tr.ReduceTime().Microseconds())/1e3/float64(tr.Step-firstStep), 100*tr.ReduceTime().Seconds()/wall.Seconds())
	}
	return nil
}

// OpenLog opens log.csv for appending after step (rows past it, from an
// interrupted run, are dropped so that a resumed log has no repeats).
func OpenLog(path string, step int) (*os.File, error) {
	var keep []string
	if raw, err := budget.ReadFile(path); err == nil && step > 0 {
		// Lines of any length: a row over a scanner's buffer must not end the log there.
		for _, line := range strings.Split(strings.TrimRight(string(raw), "\n"), "\n") {
			f := strings.SplitN(line, ",", 2)
			if n, err := strconv.Atoi(f[0]); err == nil && n > step {
				continue
			}
			keep = append(keep, line)
		}
	}
	if len(keep) == 0 {
		keep = []string{"step,loss,lr,grad_norm,steps_per_s"}
	}
	if err := atomicfile.WriteFile(path, []byte(strings.Join(keep, "\n")+"\n")); err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return f, nil
}

// maxFreshRuns bounds the run-N directories FreshRunDir tries in one directory.
const maxFreshRuns = 10000

// FreshRunDir creates and locks the first DIR/run-N (N = 1, 2, …) that
// does not exist yet: holdctl demo never trains into, or removes, a
// directory it did not create.
func FreshRunDir(dir string) (string, *runlock.Lock, error) {
	for n := 1; n <= maxFreshRuns; n++ {
		runDir := filepath.Join(dir, fmt.Sprintf("run-%d", n))
		err := os.Mkdir(runDir, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		lock, err := runlock.Acquire(runDir)
		if err != nil {
			return "", nil, err
		}
		return runDir, lock, nil
	}
	return "", nil, fmt.Errorf("%s already holds run-1 … run-%d; give another --out", dir, maxFreshRuns)
}
