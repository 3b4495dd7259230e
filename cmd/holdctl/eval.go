package main

import (
	"github.com/urfave/cli/v2"

	"holdgo/data"
	"holdgo/experiment"
	"holdgo/metrics"
)

// evalCommand compares generated points with the data distribution:
//
//	holdctl eval --data gmm1d samples.npy
//	holdctl eval --ckpt runs/hold --n 5000 --json --samples samples.npy
func evalCommand() *cli.Command {
	opt := evalOptions{Data: data.NameGMM1D, SwissNoise: data.DefaultSwissNoise, N: 5000, KernelPoints: 2000, Projections: 256,
		PRK: metrics.DefaultPRK, Seed: 1}
	return withConfig(&cli.Command{
		Name:      "eval",
		Usage:     "distances between samples (.npy) and the data: sliced Wasserstein, MMD, energy distance (1-D mixture: exact W1, mode weights)",
		ArgsUsage: "[SAMPLES.npy]",
		Description: "Draws --n fresh points of the data (--data, or the data of the run --ckpt) and reports, for the\n" +
			"samples and, as the floor to read them against, for a second independent draw of the data of the\n" +
			"same size: the sliced Wasserstein-2 distance, the squared MMD with an RBF kernel of median-heuristic\n" +
			"bandwidth and the energy distance (these two on at most --kernel-points points of each set), and the\n" +
			"improved precision and recall of Kynkäänniemi et al. 2019 (--pr-k nearest neighbours; for the multi\n" +
			"Swiss roll also per roll). For the paper's 1-D mixture (gmm1d) also the exact W1 to the mixture and\n" +
			"the share of samples per mode.",
		Flags:  []cli.Flag{trainDataFlag()},
		Action: func(c *cli.Context) error { return runEval(c, opt) },
	}, &opt)
}

// evalOptions are holdctl eval's settings.
type evalOptions struct {
	Samples      string  `flag:"samples" help:"samples (.npy, (n, d)); or give the file as the last argument"`
	Data         string  `flag:"data" help:"data distribution: gmm1d, swissroll or a .npy file of points"`
	SwissNoise   float64 `flag:"swiss-noise" min:"0" help:"noise of the Swiss rolls"`
	Ckpt         string  `flag:"ckpt" help:"take the data distribution of this run (directory or checkpoint) instead of --data"`
	N            int     `flag:"n" min:"2" max:"67108864" help:"fresh data points to compare with"`
	KernelPoints int     `flag:"kernel-points" min:"2" max:"65536" help:"points of each set used by MMD and the energy distance (O(n²))"`
	Projections  int     `flag:"projections" min:"1" max:"65536" help:"directions of the sliced Wasserstein distance"`
	PRK          int     `flag:"pr-k" min:"0" max:"67108864" note:"0: skip them; below --n" help:"nearest neighbours of the improved precision and recall (0: skip them; O(n²))"`
	Seed         uint64  `flag:"seed" help:"seed of the fresh data and the projections"`
	JSON         bool    `flag:"json" help:"print one JSON object"`
}

func runEval(c *cli.Context, opt evalOptions) error {
	path := opt.Samples
	switch {
	case c.NArg() > 1 || (c.NArg() == 1 && path != ""):
		return usageErr("eval takes one samples file (--samples FILE or a last argument; flags go before it), got %q",
			append([]string{path}, c.Args().Slice()...))
	case c.NArg() == 1:
		path = c.Args().First()
	}
	return inputExit(experiment.RunEval(experiment.EvalRun{Samples: path, Data: opt.Data, SwissNoise: opt.SwissNoise, Ckpt: opt.Ckpt,
		CkptSet: c.IsSet("ckpt"), DataSet: c.IsSet("data"), TrainData: c.String("train-data"), N: opt.N,
		KernelPoints: opt.KernelPoints, Projections: opt.Projections, PRK: opt.PRK, Seed: opt.Seed, JSON: opt.JSON}, c.App.Writer))
}
