package main

import (
	"context"
	"errors"
	"fmt"
	"os/signal"

	"github.com/urfave/cli/v2"

	"holdgo/dist"
	"holdgo/internal/parallel"
	"holdgo/tensor"
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
		&cli.StringFlag{Name: "times", Value: d.Times, Usage: "training-time sampling: uniform (the paper's), mixed (half log-uniform), or matched in the noise level σ of the sufficient statistic: sigma:edm (ln σ ~ N(-1.2, 1.2²)), sigma:vp (VP's uniform times), sigma:loguniform:A,B"},
		&cli.StringFlag{Name: "precond", Value: d.Precond, Usage: "network parameterisation: none (the SDE's noise prediction) or edm (EDM's preconditioning through the aligned gauge: input (c_in·c, w), x̂₀ = c_skip·c + c_out·F, EDM's loss weighting; CPU only)"},
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
	set("precond", func() { cfg.Precond = c.String("precond") })
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
			ctx, stop := signal.NotifyContext(c.Context, stopSignals...)
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
				return train.LocalRanks(local, "holdctl", func(lc dist.Communicator) error {
					return runTrain(ctx, c, lc, c.String("out"), c.Bool("resume"), c.Int("log-every"))
				})
			}
			return train.EndRanks(comm, runTrain(ctx, c, comm, c.String("out"), c.Bool("resume"), c.Int("log-every")), "holdctl")
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

// runTrain is this rank's part of holdctl train: train.Run on the flags.
func runTrain(ctx context.Context, c *cli.Context, comm dist.Communicator, dir string, resume bool, logEvery int) error {
	return cliError(train.Run(ctx, comm, train.RunOptions{Dir: dir, Resume: resume, LogEvery: logEvery,
		Configure:   func(base train.RunConfig) (train.RunConfig, error) { return runConfigFrom(c, base) },
		ForceUnlock: c.Bool("force-unlock"),
		OpenDevice:  func() (tensor.Device, error) { return openDevice(c.String("device")) },
		DeviceName:  c.String("device"), Out: c.App.ErrWriter}))
}

// cliError gives train's errors holdctl's form: a train.ExitError becomes "holdctl: " and its message
// with its exit status; an error every rank meets stays one (quiet off rank 0, train.CollectiveError).
func cliError(err error) error {
	var ee *train.ExitError
	if err == nil || !errors.As(err, &ee) {
		return err
	}
	exit := cli.Exit("holdctl: "+ee.Error(), ee.Status)
	var ce train.CollectiveError
	if errors.As(err, &ce) {
		ce.Err = exit
		return ce
	}
	return exit
}
