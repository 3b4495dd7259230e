package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/checkpoint"
	"holdgo/dist"
	"holdgo/hold"
	"holdgo/internal/atomicfile"
	"holdgo/internal/budget"
	"holdgo/internal/outpath"
	"holdgo/internal/parallel"
	"holdgo/internal/runlock"
	"holdgo/layers"
	"holdgo/train"
)

// Files of a run directory.
const (
	ckptName   = train.CheckpointFile
	configName = train.ConfigFile
	logName    = train.LogFile
)

func runConfigFlags(d train.RunConfig) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "config", Usage: "YAML or JSON file with any of the keys below (flags given explicitly win)"},
		&cli.StringFlag{Name: "data", Value: d.Data, Usage: "gmm1d, swissroll, a .npy file of points (n, d), or images: fashion-mnist:DIR, mnist:DIR, cifar10:DIR, images:PATH"},
		&cli.Float64Flag{Name: "swiss-noise", Value: d.SwissNoise, Usage: "noise of the Swiss rolls"},
		&cli.StringFlag{Name: "sde", Value: d.SDE, Usage: "hold, cld, vp or ve"},
		&cli.IntFlag{Name: "order", Value: d.Order, Usage: "HOLD order n (2, 3 or 4)"},
		&cli.Float64Flag{Name: "L", Value: d.L, Usage: "HOLD prior precision L"},
		&cli.Float64Flag{Name: "alpha", Value: d.Alpha, Usage: "HOLD initial auxiliary variance factor α"},
		&cli.StringFlag{Name: "objective", Value: d.Objective, Usage: "bcsm (hsm for CLD) or dsm"},
		&cli.StringFlag{Name: "times", Value: d.Times, Usage: "training-time sampling: uniform (the paper's) or mixed (half log-uniform)"},
		&cli.Float64Flag{Name: "times-log-min", Value: d.TimesLogMin, Usage: "lower end of the log-uniform half of --times mixed (0: the SDE's t_min)"},
		&cli.StringFlag{Name: "model", Value: d.Model, Usage: "score network: mlp (points) or ncsnpp-small, ncsnpp-cifar10, ncsnpp-celebahq256 (images)"},
		&cli.IntFlag{Name: "hidden", Value: d.Hidden, Usage: "MLP hidden width"},
		&cli.IntFlag{Name: "layers", Value: d.Layers, Usage: "MLP Linear layers"},
		&cli.BoolFlag{Name: "log-time", Value: d.LogTime, Usage: "MLP: log t as an extra input next to t"},
		&cli.IntFlag{Name: "fourier", Value: d.Fourier, Usage: "MLP: random Fourier features of the data block (sin and cos of N frequencies; 0: none)"},
		&cli.Float64Flag{Name: "fourier-scale", Value: d.FourierScale, Usage: "MLP: standard deviation of the Fourier frequencies (0: 10)"},
		&cli.BoolFlag{Name: "estimate", Value: d.Estimate, Usage: "MLP: the kernel's flat-prior estimate of x₀ from the state as an input, and --fourier features of it instead of the position's"},
		&cli.BoolFlag{Name: "flip", Value: d.Flip, Usage: "images: random horizontal flips"},
		&cli.Float64Flag{Name: "dropout", Value: d.Dropout, Usage: "NCSN++ dropout (CIFAR-10 recipe: 0.1)"},
		&cli.IntFlag{Name: "nf", Value: d.NF, Usage: "NCSN++ base channels (0: the preset's)"},
		&cli.IntFlag{Name: "res-blocks", Value: d.ResBlocks, Usage: "NCSN++ res-blocks per level (0: the preset's)"},
		&cli.IntFlag{Name: "steps", Value: d.Steps, Usage: "total optimisation steps"},
		&cli.IntFlag{Name: "batch", Value: d.Batch, Usage: "batch size"},
		&cli.Float64Flag{Name: "lr", Value: d.LR, Usage: "Adam learning rate"},
		&cli.IntFlag{Name: "warmup", Value: d.Warmup, Usage: "linear learning-rate warm-up steps"},
		&cli.StringFlag{Name: "lr-decay", Value: d.LRDecay, Usage: "learning-rate decay after warm-up: none, or cosine (to 0 at --steps; a resumed run with a new --steps follows the new schedule)"},
		&cli.Float64Flag{Name: "grad-clip", Value: d.GradClip, Usage: "global gradient-norm clip (0: off)"},
		&cli.Float64Flag{Name: "ema", Value: d.EMA, Usage: "EMA rate of the weights"},
		&cli.Uint64Flag{Name: "seed", Value: d.Seed, Usage: "random seed (initialisation, data, noise)"},
		&cli.IntFlag{Name: "ckpt-every", Value: d.CkptEvery, Usage: "write the checkpoint every N steps (0: only at the end)"},
	}
}

// runConfigFrom resolves defaults < --config file < flags set explicitly.
func runConfigFrom(c *cli.Context, base train.RunConfig) (train.RunConfig, error) {
	cfg := base
	if path := c.String("config"); path != "" {
		var err error
		if cfg, err = train.ReadRunConfig(path, cfg); err != nil {
			return cfg, err
		}
	}
	set := func(name string, apply func()) {
		if c.IsSet(name) {
			apply()
		}
	}
	set("data", func() { cfg.Data = c.String("data") })
	set("swiss-noise", func() { cfg.SwissNoise = c.Float64("swiss-noise") })
	set("sde", func() { cfg.SDE = c.String("sde") })
	set("order", func() { cfg.Order = c.Int("order") })
	set("L", func() { cfg.L = c.Float64("L") })
	set("alpha", func() { cfg.Alpha = c.Float64("alpha") })
	set("objective", func() { cfg.Objective = c.String("objective") })
	set("times", func() { cfg.Times = c.String("times") })
	set("times-log-min", func() { cfg.TimesLogMin = c.Float64("times-log-min") })
	set("model", func() { cfg.Model = c.String("model") })
	set("hidden", func() { cfg.Hidden = c.Int("hidden") })
	set("layers", func() { cfg.Layers = c.Int("layers") })
	set("log-time", func() { cfg.LogTime = c.Bool("log-time") })
	set("fourier", func() { cfg.Fourier = c.Int("fourier") })
	set("fourier-scale", func() { cfg.FourierScale = c.Float64("fourier-scale") })
	set("estimate", func() { cfg.Estimate = c.Bool("estimate") })
	set("flip", func() { cfg.Flip = c.Bool("flip") })
	set("dropout", func() { cfg.Dropout = c.Float64("dropout") })
	set("nf", func() { cfg.NF = c.Int("nf") })
	set("res-blocks", func() { cfg.ResBlocks = c.Int("res-blocks") })
	set("steps", func() { cfg.Steps = c.Int("steps") })
	set("batch", func() { cfg.Batch = c.Int("batch") })
	set("lr", func() { cfg.LR = c.Float64("lr") })
	set("warmup", func() { cfg.Warmup = c.Int("warmup") })
	set("lr-decay", func() { cfg.LRDecay = c.String("lr-decay") })
	set("grad-clip", func() { cfg.GradClip = c.Float64("grad-clip") })
	set("ema", func() { cfg.EMA = c.Float64("ema") })
	set("seed", func() { cfg.Seed = c.Uint64("seed") })
	set("ckpt-every", func() { cfg.CkptEvery = c.Int("ckpt-every") })
	return cfg, nil
}

func trainCommand() *cli.Command {
	return &cli.Command{
		Name:  "train",
		Usage: "train a score model (writes DIR/config.yaml, DIR/ckpt.safetensors, DIR/log.csv)",
		Flags: append(runConfigFlags(train.DefaultRunConfig()),
			&cli.StringFlag{Name: "out", Value: "runs/hold", Usage: "run directory"},
			&cli.BoolFlag{Name: "resume", Usage: "continue the run in --out from its checkpoint (up to --steps in total); " +
				"only --steps, --ckpt-every, --log-every, --threads, --local-ranks and --time-limit may differ from the stored run"},
			&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
			&cli.IntFlag{Name: "local-ranks", Value: 1, Usage: "data-parallel ranks in this process (goroutines on one thread each, the batch split " +
				"evenly): faster than splitting each operation for small networks such as the toy MLP (holdctl demo trains on 2)"},
			&cli.IntFlag{Name: "log-every", Value: 100, Usage: "steps between log.csv rows and plain progress lines"},
			&cli.DurationFlag{Name: "time-limit", Usage: "stop after this wall time (e.g. 58m), writing the checkpoint; 0: no limit"},
			&cli.BoolFlag{Name: "force-unlock", Usage: "take over a run directory's lock that names another host (only when its process is known to be dead)"},
			deviceFlag(),
		),
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usageErr("train takes no arguments, got %q", c.Args().First())
			}
			if c.Int("log-every") < 1 {
				return usageErr("--log-every must be ≥ 1, got %d", c.Int("log-every"))
			}
			if d := c.Duration("time-limit"); d < 0 {
				return usageErr("--time-limit must be ≥ 0 (0: no limit), got %v", d)
			}
			if err := setThreads(c); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
			defer stop()
			ownSignals() // a signal writes a checkpoint first (loop), instead of main's plain cleanup
			if d := c.Duration("time-limit"); d > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, d)
				defer cancel()
			}
			comm, err := dist.Open()
			if err != nil {
				return usageErr("%v", err)
			}
			if local := c.Int("local-ranks"); local != 1 {
				switch {
				case local < 1 || local > maxThreads:
					return usageErr("--local-ranks must be in [1, %d], got %d", maxThreads, local)
				case comm.Size() > 1:
					return usageErr("--local-ranks with an MPI launcher: use one or the other (ranks of %d processes here)", comm.Size())
				case c.String("device") != "cpu":
					return usageErr("--local-ranks trains on the CPU; drop it for --device %s", c.String("device"))
				}
				return trainLocalRanks(local, func(lc dist.Communicator) error {
					return runTrain(ctx, c, lc, c.String("out"), c.Bool("resume"), c.Int("log-every"))
				})
			}
			return endRanks(comm, runTrain(ctx, c, comm, c.String("out"), c.Bool("resume"), c.Int("log-every")))
		},
	}
}

// usageErr is an input error: exit status 2.
func usageErr(format string, args ...any) error {
	return cli.Exit("holdctl: "+fmt.Sprintf(format, args...), 2)
}

// maxThreads bounds --threads: each thread is a persistent worker goroutine.
const maxThreads = 256

// setThreads applies --threads (0: all cores) after checking its range.
func setThreads(c *cli.Context) error {
	if err := checkThreads(c); err != nil {
		return err
	}
	parallel.SetThreads(c.Int("threads"))
	return nil
}

// checkThreads is the usage error for a --threads outside [0, maxThreads].
func checkThreads(c *cli.Context) error {
	if n := c.Int("threads"); n < 0 || n > maxThreads {
		return usageErr("--threads must be in [0, %d] (0: all cores), got %d", maxThreads, n)
	}
	return nil
}

// session is a training run bound to its directory. With a communicator
// of several ranks, rank 0 alone writes the directory and the progress.
type session struct {
	dir     string
	cfg     train.RunConfig
	trainer *train.Trainer
	log     *os.File
	out     io.Writer
	comm    dist.Communicator // nil: one process
	// resume is how the interruption message says to continue ("" : with
	// --resume, as holdctl train).
	resume string
}

// lead reports whether this process writes the run directory and progress.
func (s *session) lead() bool { return s.comm == nil || s.comm.Rank() == 0 }

// ranks is the number of processes that train.
func (s *session) ranks() int {
	if s.comm == nil {
		return 1
	}
	return s.comm.Size()
}

// preparedRun is what rank 0 (or the one process) makes of the run
// directory before training: the configuration, the checkpoint to resume,
// the directory's lock, and fail, which undoes a directory this run created.
type preparedRun struct {
	cfg  train.RunConfig
	file *checkpoint.File
	lock *runlock.Lock
	fail func(error) error
}

func runTrain(ctx context.Context, c *cli.Context, comm dist.Communicator, dir string, resume bool, logEvery int) error {
	var run preparedRun
	var err error
	if comm.Rank() == 0 {
		run, err = prepareRun(c, dir, resume, comm.Size())
		if run.lock != nil {
			defer run.lock.Release()
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
				return usageErr("cannot resume: %v", err)
			}
		}
	}
	tr, err := cfg.NewTrainer(comm) // prepareRun checked that the batch splits
	if err != nil {
		return fail(usageErr("%v", err))
	}
	if run.file != nil {
		if err := tr.Restore(run.file); err != nil {
			return usageErr("cannot resume: %v", err)
		}
	}
	if err := tr.Broadcast(); err != nil {
		return err
	}
	dev, err := openDevice(c.String("device"))
	if err != nil {
		return fail(usageErr("%v", err))
	}
	if err := tr.SetDevice(dev); err != nil {
		return fail(usageErr("--device %s: %v", c.String("device"), err))
	}
	s := &session{dir: dir, cfg: cfg, trainer: tr, out: c.App.ErrWriter, comm: comm}
	if s.lead() {
		yml, err := cfg.YAML()
		if err != nil {
			return fail(usageErr("%v", err))
		}
		if err := atomicfile.WriteFile(filepath.Join(dir, configName), yml); err != nil {
			return usageErr("cannot write to the run directory: %v", err)
		}
		if s.log, err = openLog(filepath.Join(dir, logName), tr.Step); err != nil {
			return usageErr("%v", err)
		}
		defer s.log.Close()
	}
	return s.loop(ctx, logEvery)
}

// prepareRun checks the flags, creates and locks the run directory, and
// resolves the configuration (from the flags, or from the checkpoint on
// --resume) for ranks processes.
func prepareRun(c *cli.Context, dir string, resume bool, ranks int) (preparedRun, error) {
	ckpt := filepath.Join(dir, ckptName)
	var (
		cfg  train.RunConfig
		file *checkpoint.File
		err  error
		run  preparedRun
	)
	if !resume {
		// Everything the flags say is checked before the directory is touched.
		if cfg, err = runConfigFrom(c, train.DefaultRunConfig()); err != nil {
			return run, usageErr("%v", err)
		}
		if err := cfg.Validate(); err != nil {
			return run, usageErr("%v", err)
		}
	} else if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return run, usageErr("cannot resume: %s is not a run directory (%v)", dir, err)
	}
	// A shipped model is refused before anything is written into its directory (no .lock left in it).
	if f, err := checkpoint.Load(ckpt); err == nil && f.Meta[train.KeyExported] != "" {
		return run, usageErr("%s holds a shipped model (holdctl export: EMA weights only, no optimizer state): it cannot be trained or resumed; train a new run from the data into another --out", dir)
	}
	wasRun := outpath.IsRunDir(dir)
	created, err := makeRunDir(dir)
	if err != nil {
		return run, usageErr("cannot create run directory: %v", err)
	}
	lock, err := runlock.AcquireWith(dir, runlock.Options{ForceUnlock: c.Bool("force-unlock")})
	if err != nil { // the directory stays even if this call created it: the lock's holder may have found it so
		if errors.Is(err, runlock.ErrLocked) || errors.Is(err, runlock.ErrOtherHost) {
			return run, usageErr("%v", err)
		}
		return run, usageErr("cannot lock the run directory: %v", err)
	}
	run.lock = lock
	if lock.Stale != "" {
		fmt.Fprintf(c.App.ErrWriter, "warning: took over the stale lock of %s in %s (that process no longer holds it)\n", lock.Stale, dir)
	}
	var removed []string
	if wasRun { // only a run's own temporary files, only in a run directory
		removed, err = atomicfile.RemoveStale(dir, ckptName, configName, logName, train.DataFile)
	}
	if len(removed) > 0 {
		fmt.Fprintf(c.App.ErrWriter, "removed stale temporary files of writes that were killed: %s\n", strings.Join(removed, ", "))
	}
	if err != nil {
		return run, usageErr("%s: %v", dir, err)
	}
	// fail undoes what this run added to a directory it created.
	run.fail = func(err error) error {
		if created {
			os.RemoveAll(dir)
		}
		return err
	}
	if resume {
		if cfg, file, err = resumeConfig(c, dir, ckpt); err != nil {
			return run, err
		}
	} else {
		if _, err := os.Stat(ckpt); err == nil {
			return run, usageErr("%s already holds a run; pass --resume to continue it or choose another --out", dir)
		}
		if cfg.PointFile() {
			if err := cfg.StoreData(dir); err != nil {
				return run, run.fail(usageErr("%v", err))
			}
		}
	}
	cfg.Ranks = ranks
	if _, _, err := dist.Split(cfg.Batch, 0, ranks); err != nil {
		return run, run.fail(usageErr("--batch is the global batch: %v", err))
	}
	if _, err := cfg.Meta(); err != nil { // the checkpoint's metadata must encode before any step is spent
		return run, run.fail(usageErr("%v", err))
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
// (steps, ckpt-every) taken from the flags. Any other flag or --config key
// that contradicts the stored run is an error listing every difference.
func resumeConfig(c *cli.Context, dir, ckpt string) (train.RunConfig, *checkpoint.File, error) {
	file, err := checkpoint.Load(ckpt)
	if err != nil {
		return train.RunConfig{}, nil, usageErr("cannot resume: %v", err)
	}
	stored, err := train.ConfigFromCheckpoint(file)
	if err != nil {
		return stored, nil, usageErr("cannot resume: %v", err)
	}
	want, err := runConfigFrom(c, stored)
	if err != nil {
		return stored, nil, usageErr("%v", err)
	}
	if diff := stored.Differences(want, "steps", "ckpt_every", "ranks"); len(diff) > 0 {
		return stored, nil, usageErr("cannot resume %s: the flags contradict the stored run (%s); only --steps, --ckpt-every, "+
			"--log-every, --threads and --time-limit may change on --resume, start a new run (another --out) to change the rest",
			dir, strings.Join(diff, "; "))
	}
	cfg := stored
	cfg.Steps, cfg.CkptEvery = want.Steps, want.CkptEvery
	if err := cfg.Validate(); err != nil {
		return cfg, nil, usageErr("%v", err)
	}
	if err := cfg.UseStoredData(dir, ""); err != nil {
		return cfg, nil, usageErr("cannot resume: %v", err)
	}
	return cfg, file, nil
}

// save writes the checkpoint (rank 0 only: every rank holds the same state).
func (s *session) save() error {
	if !s.lead() {
		return nil
	}
	meta, err := s.cfg.Meta()
	if err != nil {
		return err
	}
	return s.trainer.Save(filepath.Join(s.dir, ckptName), meta)
}

func (s *session) loop(ctx context.Context, logEvery int) error {
	tr, cfg := s.trainer, s.cfg
	out := s.out
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
		kind, cfg.Data, tr.Params.Len(), tr.Step, cfg.Steps, cfg.Batch, ranks, cfg.Seed, tr.Device().Name(), s.dir)
	bar := newProgress(out, tr.Step, cfg.Steps, logEvery)
	lastGood := tr.Step
	var lastRead train.Stats
	window := time.Now()
	windowStart := tr.Step
	rank := 0
	if s.comm != nil {
		rank = s.comm.Rank()
	}
	began, firstStep := time.Now(), tr.Step
	for tr.Step < cfg.Steps {
		reason := stopReason(ctx)
		if s.comm != nil {
			var err error
			if reason, err = agreeStop(s.comm, reason, tr.Step); err != nil {
				return err
			}
		}
		if reason != runOn {
			bar.finish()
			if err := s.save(); err != nil {
				return fmt.Errorf("interrupted at step %d, and the checkpoint could not be written: %w", tr.Step, err)
			}
			if reason == runDeadline {
				fmt.Fprintf(out, "time limit reached: step %d, checkpoint %s\n", tr.Step, filepath.Join(s.dir, ckptName))
				return nil
			}
			how := s.resume
			if how == "" {
				how = "continue with --resume"
			}
			return collective(cli.Exit(fmt.Sprintf("holdctl: interrupted: checkpoint of step %d written to %s; %s", tr.Step, s.dir, how), 130), rank)
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
		if errors.Is(err, train.ErrNonFinite) { // every rank meets it at the same step (all-reduced loss)
			bar.finish()
			return collective(cli.Exit(fmt.Sprintf("holdctl: training stopped: %v.\nThe last good checkpoint (step %d) is kept in %s. "+
				"Try a lower --lr, gradient clipping (--grad-clip 1) or check the data for NaN/Inf.", err, lastGood, s.dir), 1), rank)
		}
		if err != nil {
			bar.finish()
			return err
		}
		if s.lead() && (st.Step%logEvery == 0 || st.Step == cfg.Steps) {
			rate := float64(st.Step-windowStart) / time.Since(window).Seconds()
			window, windowStart = time.Now(), st.Step
			fmt.Fprintf(s.log, "%d,%.6g,%.6g,%.6g,%.4g\n", st.Step, st.Loss, st.LR, st.GradNorm, rate)
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
	fmt.Fprintf(out, "done: step %d, checkpoint %s\n", tr.Step, filepath.Join(s.dir, ckptName))
	if s.ranks() > 1 && tr.Step > firstStep {
		wall := time.Since(began)
		fmt.Fprintf(out, "rank 0: %.2f ms per step, all-reduce of %d values %.2f ms per step (%.1f%%)\n",
			float64(wall.Microseconds())/1e3/float64(tr.Step-firstStep), tr.Params.Len()+layers.ReduceSlots,
			float64(tr.ReduceTime().Microseconds())/1e3/float64(tr.Step-firstStep), 100*tr.ReduceTime().Seconds()/wall.Seconds())
	}
	return nil
}

// openLog opens log.csv for appending after step (rows past it, from an
// interrupted run, are dropped so that a resumed log has no repeats).
func openLog(path string, step int) (*os.File, error) {
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
