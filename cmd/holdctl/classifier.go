package main

import (
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/outpath"
	"holdgo/internal/parallel"
	"holdgo/train"
)

// classifierCommand trains the small CNN whose penultimate layer is the
// offline feature network of `holdctl fid --features CKPT`:
//
//	holdctl classifier train --data fashion-mnist:/usr/share/datasets/fashion-mnist --out fmnist-classifier.safetensors
//
// classifierOptions are holdctl classifier train's numeric settings.
type classifierOptions struct {
	Epochs int     `flag:"epochs" min:"1" max:"100000" help:"passes over the training images"`
	Batch  int     `flag:"batch" min:"1" max:"65536" help:"batch size"`
	LR     float64 `flag:"lr" gt:"0" max:"10" help:"peak learning rate (cosine decay to 0)"`
	Limit  int     `flag:"limit" min:"0" max:"2147483647" note:"0: all" help:"use at most this many training images (0: all)"`
	Seed   uint64  `flag:"seed" help:"seed of the initialisation and the shuffling"`
	parallel.ThreadsOption
}

func classifierCommand() *cli.Command {
	opt := classifierOptions{Epochs: 5, Batch: 128, LR: 2e-3, Seed: 1}
	return &cli.Command{
		Name:  "classifier",
		Usage: "a small CNN classifier: the offline feature network for 'holdctl fid --features CKPT'",
		Subcommands: []*cli.Command{withConfig(&cli.Command{
			Name:  "train",
			Usage: "train the classifier on a labelled image data set and report its test accuracy",
			Description: "Trains conv(32)–conv(64, stride 2)–conv(64, stride 2)–Linear(128)–Linear(classes), SiLU, with\n" +
				"Adam and a cosine learning-rate decay on the train split of --data (images scaled to [−1, 1]),\n" +
				"measures the accuracy on the test split (KIND:DIR#test) and writes a safetensors checkpoint\n" +
				"whose 128-d penultimate layer 'holdctl fid --features CKPT' uses.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "data", Usage: "labelled images: fashion-mnist:DIR, mnist:DIR, cifar10:DIR or images:DIR (class = sub-folder)"},
				&cli.StringFlag{Name: "test", Usage: "test data (default: the #test split of --data)"},
				&cli.StringFlag{Name: "out", Value: "classifier.safetensors", Usage: "checkpoint to write"},
				forceFlag(),
			},
			Action: func(c *cli.Context) error { return runClassifierTrain(c, opt) },
		}, &opt)},
	}
}

func runClassifierTrain(c *cli.Context, opt classifierOptions) error {
	spec := c.String("data")
	if spec == "" || !imagedata.IsSpec(spec) {
		return usageErr("classifier train: --data KIND:DIR with labels, KIND one of %v (got %q)", imagedata.Kinds, spec)
	}
	epochs, batch, lr := opt.Epochs, opt.Batch, opt.LR
	opt.Apply()
	guard := outpath.New(c.Bool("force"))
	guard.Data(spec, c.String("test"))
	if err := checkOutputs(guard, output{"out", c.String("out"), outpath.Safetensors}); err != nil {
		return err
	}
	trainSet, testSet, testSpec, err := train.OpenClassifierData(spec, c.String("test"))
	if err != nil {
		return cliError(err)
	}
	run, err := train.NewClassifierRun(trainSet, testSet, train.ClassifierOptions{Epochs: epochs, Batch: batch, LR: lr, Limit: opt.Limit, Seed: opt.Seed})
	if err != nil {
		return err
	}
	cfg := run.Config
	w := c.App.Writer
	fmt.Fprintf(w, "classifier: %d train images %d×%d×%d, %d classes, %d parameters, %d epochs of batch %d\n",
		run.NTrain, cfg.Channels, cfg.Height, cfg.Width, cfg.Classes, run.Model.Params.Len(), epochs, batch)
	if err := checkBudget("batch", int64(batch)*int64(trainSet.Dimension()), 4*8); err != nil { // the batch and its activations, roughly
		return err
	}
	var last train.ClassifierEpoch
	err = run.Run(func(e train.ClassifierEpoch) {
		fmt.Fprintf(w, "epoch %d/%d  train loss %.4f  train accuracy %.4f  test accuracy %.4f  %.0f s\n", e.Epoch, e.Epochs,
			e.Loss, e.TrainAccuracy, e.TestAccuracy, time.Since(e.Began).Seconds())
		last = e
	})
	if err != nil {
		return cliError(err)
	}
	info := fid.ClassifierInfo{Data: spec, TestAccuracy: last.TestAccuracy, Epochs: epochs, Seconds: time.Since(last.Began).Seconds()}
	if err := fid.SaveClassifier(c.String("out"), run.Model, info); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s: test accuracy %.4f on %d images of %s, %.0f s\n", c.String("out"), last.TestAccuracy, testSet.N, testSpec, info.Seconds)
	return nil
}
