package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/dist"
	"holdgo/internal/clibind"
	"holdgo/internal/devices"
	"holdgo/internal/parallel"
	"holdgo/internal/procexit"
	"holdgo/tensor"
	"holdgo/train"
)

// Files of a run directory.
const (
	ckptName   = train.CheckpointFile
	configName = train.ConfigFile
	logName    = train.LogFile
)

// trainOptions are holdctl train's settings beside the run's configuration (train.RunConfig's flags).
type trainOptions struct {
	Config string `flag:"config" help:"YAML or JSON file with any of the keys below (flags given explicitly win)"`
	Out    string `flag:"out" help:"run directory"`
	Resume bool   `flag:"resume" help:"continue the run in --out from its checkpoint (up to --steps in total); only --steps, --ckpt-every, --log-every, --threads, --local-ranks and --time-limit may differ from the stored run"`
	parallel.ThreadsOption
	LocalRanks  int           `flag:"local-ranks" min:"1" max:"256" help:"data-parallel ranks in this process (goroutines on one thread each, the batch split evenly): faster than splitting each operation for small networks such as the toy MLP (holdctl demo trains on 2)"`
	LogEvery    int           `flag:"log-every" min:"1" help:"steps between log.csv rows and plain progress lines"`
	TimeLimit   time.Duration `flag:"time-limit" min:"0" note:"0: no limit" help:"stop after this wall time (e.g. 58m), writing the checkpoint; 0: no limit"`
	ForceUnlock bool          `flag:"force-unlock" help:"take over a run directory's lock that names another host (only when its process is known to be dead)"`
	Dist        string        `flag:"dist" help:"how the ranks sum their gradients: host (an all-reduce of host copies over MPI or --local-ranks) or nccl (NCCL in device memory, bucket by bucket during the backward pass, --device cuda; exit 2 naming every path tried when no NCCL loads)"`
}

func trainCommand() *cli.Command {
	opt := trainOptions{Out: "runs/hold", LocalRanks: 1, LogEvery: 100, Dist: "host"}
	flags := train.DefaultRunConfig() // only the flags given are read, over --config's keys (runTrain)
	return withConfig(&cli.Command{
		Name:  "train",
		Usage: "train a score model (writes DIR/config.yaml, DIR/ckpt.safetensors, DIR/log.csv)",
		Flags: []cli.Flag{deviceFlag()},
		Action: func(c *cli.Context) error {
			opt.Apply()
			ctx, stop := signal.NotifyContext(c.Context, procexit.StopSignals...)
			defer stop()
			procexit.OwnSignals() // a signal writes a checkpoint first (loop), instead of main's plain cleanup
			if opt.TimeLimit > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, opt.TimeLimit)
				defer cancel()
			}
			if err := devices.CheckDist(opt.Dist, c.String("device")); err != nil {
				return usageErr("%v", err)
			}
			comm, err := dist.Open()
			if err != nil {
				return usageErr("%v", err)
			}
			if opt.LocalRanks != 1 {
				switch {
				case comm.Size() > 1:
					return usageErr("--local-ranks with an MPI launcher: use one or the other (ranks of %d processes here)", comm.Size())
				case c.String("device") != "cpu":
					return usageErr("--local-ranks trains on the CPU; drop it for --device %s", c.String("device"))
				}
				return train.LocalRanks(opt.LocalRanks, "holdctl", func(lc dist.Communicator) error {
					return runTrain(ctx, c, lc, opt)
				})
			}
			return train.EndRanks(comm, runTrain(ctx, c, comm, opt), "holdctl")
		},
	}, &opt, &flags)
}

// usageErr is an input error: exit status 2.
func usageErr(format string, args ...any) error {
	return cli.Exit("holdctl: "+fmt.Sprintf(format, args...), 2)
}

// runTrain is this rank's part of holdctl train: train.Run on the flags, resolving the configuration
// as defaults (or the stored run's) < --config's keys < the flags given.
func runTrain(ctx context.Context, c *cli.Context, comm dist.Communicator, opt trainOptions) error {
	configure := func(base train.RunConfig) (train.RunConfig, error) {
		cfg := base
		if opt.Config != "" {
			var err error
			if cfg, err = train.ReadRunConfig(opt.Config, cfg); err != nil {
				return cfg, err
			}
		}
		return cfg, clibind.Bind(c, &cfg)
	}
	return cliError(train.Run(ctx, comm, train.RunOptions{Dir: opt.Out, Resume: opt.Resume, LogEvery: opt.LogEvery,
		Configure:   configure,
		ForceUnlock: opt.ForceUnlock,
		OpenDevice:  func() (tensor.Device, error) { return openRankDevice(c, comm, opt) },
		DeviceComm:  devices.DeviceComm(opt.Dist),
		DeviceName:  c.String("device"), Out: c.App.ErrWriter}))
}

// openRankDevice opens this rank's --device: in a run of several processes, --device cuda without an
// ordinal takes the GPU of the rank's local rank (devices.ForRank), and every rank says once where it runs
// (devices.RankLine; not for --local-ranks, whose ranks share the process and its device).
func openRankDevice(c *cli.Context, comm dist.Communicator, opt trainOptions) (tensor.Device, error) {
	name, err := devices.ForRank(c.String("device"), comm.Size(), os.LookupEnv, devices.Count)
	if err != nil {
		return nil, err
	}
	dev, err := devices.Open(name)
	if err != nil || comm.Size() < 2 || opt.LocalRanks > 1 {
		return dev, err
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown (" + err.Error() + ")"
	}
	fmt.Fprintln(c.App.ErrWriter, devices.RankLine(comm.Rank(), comm.Size(), host, dev))
	return dev, nil
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
