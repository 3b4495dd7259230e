package main

import (
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/experiment"
	"holdgo/internal/clibind"
	"holdgo/internal/devices"
	"holdgo/internal/parallel"
	"holdgo/sample"
	"holdgo/train"
)

// sampleHelp gives the sampler flags of cmd their computed help texts (the lists of names) and
// returns cmd.
func sampleHelp(cmd *cli.Command) *cli.Command {
	clibind.SetUsage(cmd, "sampler", strings.Join(sample.MethodNames(), ", "))
	clibind.SetUsage(cmd, "grid", "time grid: "+strings.Join(sample.GridKinds, ", "))
	return cmd
}

// samplerOn opens --device and returns its sampling function for the model (Sampler.On); errors
// are the user's (exit status 2).
func samplerOn(device string, s *sample.Sampler, m *train.Model, w io.Writer) (sample.Func, error) {
	dev, err := devices.Open(device)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	run, err := s.On(dev, device, m.Score, w)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return run, nil
}

// trainDataFlag re-points a run on .npy points at a copy of them.
func trainDataFlag() cli.Flag {
	return &cli.StringFlag{Name: "train-data", Usage: "a run trained on a .npy file: read its points from this file " +
		"(same content) instead of the copy in the run directory"}
}

// sampleOptions are holdctl sample's settings.
type sampleOptions struct {
	sample.SpecFlags
	Ckpt       string   `flag:"ckpt" help:"run directory or checkpoint file of holdctl train"`
	RawWeights bool     `flag:"raw-weights" help:"use the raw weights instead of the EMA weights"`
	Oracle     bool     `flag:"oracle" help:"use the exact score of the data (mixture data, --data gmm1d, or the empirical distribution of images)"`
	Data       string   `flag:"data" help:"data of --oracle: a mixture (gmm1d) or images (fashion-mnist:DIR, mnist:DIR, cifar10:DIR, images:PATH: the empirical distribution of --oracle-n images)"`
	OracleN    int      `flag:"oracle-n" min:"1" max:"1048576" help:"images in the empirical oracle of --oracle --data IMAGES"`
	SDE        string   `flag:"sde" help:"SDE of --oracle: hold, cld, vp or ve"`
	Order      int      `flag:"order" min:"1" max:"4" note:"HOLD: 2, 3 or 4" help:"HOLD order of --oracle"`
	L          float64  `flag:"L" gt:"0" help:"HOLD L of --oracle"`
	Alpha      float64  `flag:"alpha" min:"0" help:"HOLD α of --oracle"`
	N          int      `flag:"n" min:"1" max:"2e18" note:"and its samples fit in a file" help:"number of samples"`
	Seed       uint64   `flag:"seed" help:"random seed"`
	Out        []string `flag:"out" help:"output files: .npy (float32, (n, d)) and/or .png"`
	parallel.ThreadsOption
}

func sampleCommand() *cli.Command {
	d := train.DefaultRunConfig()
	opt := sampleOptions{SpecFlags: sample.DefaultSpecFlags(), Data: data.NameGMM1D, OracleN: 1000, SDE: d.SDE, Order: d.Order, L: d.L,
		Alpha: d.Alpha, N: 10000, Out: []string{"samples.npy"}}
	return sampleHelp(withConfig(&cli.Command{
		Name:   "sample",
		Usage:  "draw samples from a trained checkpoint or from the exact score of mixture data",
		Flags:  []cli.Flag{trainDataFlag(), forceFlag(), deviceFlag(), precisionFlag()},
		Before: oneProcess("sample"),
		Action: func(c *cli.Context) error {
			opt.Apply()
			open, err := openFlag(c)
			if err != nil {
				return err
			}
			oracle := d
			oracle.Data, oracle.SDE, oracle.Order, oracle.L, oracle.Alpha = opt.Data, opt.SDE, opt.Order, opt.L, opt.Alpha
			return inputExit(experiment.RunSample(experiment.SampleRun{SpecFlags: opt.SpecFlags, IsSet: c.IsSet, Ckpt: opt.Ckpt,
				Raw: opt.RawWeights, TrainData: c.String("train-data"), Oracle: opt.Oracle, OracleConfig: oracle, OracleN: opt.OracleN,
				N: opt.N, Seed: opt.Seed, Outs: opt.Out, Force: c.Bool("force"), Device: c.String("device"), Open: open},
				c.App.Writer, c.App.ErrWriter))
		},
	}, &opt))
}
