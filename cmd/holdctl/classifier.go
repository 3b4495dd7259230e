package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"holdgo/autograd"
	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/outpath"
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/rng"
	"holdgo/tensor"
)

// classifierCommand trains the small CNN whose penultimate layer is the
// offline feature network of `holdctl fid --features CKPT`:
//
//	holdctl classifier train --data fashion-mnist:/usr/share/datasets/fashion-mnist --out fmnist-classifier.safetensors
func classifierCommand() *cli.Command {
	return &cli.Command{
		Name:  "classifier",
		Usage: "a small CNN classifier: the offline feature network for 'holdctl fid --features CKPT'",
		Subcommands: []*cli.Command{{
			Name:  "train",
			Usage: "train the classifier on a labelled image data set and report its test accuracy",
			Description: "Trains conv(32)–conv(64, stride 2)–conv(64, stride 2)–Linear(128)–Linear(classes), SiLU, with\n" +
				"Adam and a cosine learning-rate decay on the train split of --data (images scaled to [−1, 1]),\n" +
				"measures the accuracy on the test split (KIND:DIR#test) and writes a safetensors checkpoint\n" +
				"whose 128-d penultimate layer 'holdctl fid --features CKPT' uses.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "data", Usage: "labelled images: fashion-mnist:DIR, mnist:DIR, cifar10:DIR or images:DIR (class = sub-folder)"},
				&cli.StringFlag{Name: "test", Usage: "test data (default: the #test split of --data)"},
				&cli.IntFlag{Name: "epochs", Value: 5, Usage: "passes over the training images"},
				&cli.IntFlag{Name: "batch", Value: 128, Usage: "batch size"},
				&cli.Float64Flag{Name: "lr", Value: 2e-3, Usage: "peak learning rate (cosine decay to 0)"},
				&cli.IntFlag{Name: "limit", Usage: "use at most this many training images (0: all)"},
				&cli.Uint64Flag{Name: "seed", Value: 1, Usage: "seed of the initialisation and the shuffling"},
				&cli.StringFlag{Name: "out", Value: "classifier.safetensors", Usage: "checkpoint to write"},
				&cli.IntFlag{Name: "threads", Usage: "worker threads (default: all cores)"},
				forceFlag(),
			},
			Action: runClassifierTrain,
		}},
	}
}

func runClassifierTrain(c *cli.Context) error {
	spec := c.String("data")
	if spec == "" || !imagedata.IsSpec(spec) {
		return usageErr("classifier train: --data KIND:DIR with labels, KIND one of %v (got %q)", imagedata.Kinds, spec)
	}
	epochs, batch, lr := c.Int("epochs"), c.Int("batch"), c.Float64("lr")
	if epochs < 1 || batch < 1 || !(lr > 0) || c.Int("limit") < 0 {
		return usageErr("classifier train: --epochs and --batch must be ≥ 1, --lr > 0, --limit ≥ 0")
	}
	if err := checkInts(c, intRange{name: "epochs", lo: 1, hi: 100000}, intRange{name: "batch", lo: 1, hi: 1 << 16},
		intRange{name: "limit", lo: 0, hi: math.MaxInt32, note: "0: all"}); err != nil {
		return err
	}
	if err := checkFloats(c, floatRange{name: "lr", lo: 0, hi: 10, openLo: true}); err != nil {
		return err
	}
	if err := setThreads(c); err != nil {
		return err
	}
	guard := outpath.New(c.Bool("force"))
	guard.Input(specPath(spec), specPath(c.String("test")))
	if err := checkOutputs(guard, output{"out", c.String("out"), outpath.Safetensors}); err != nil {
		return err
	}
	trainSet, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return cli.Exit(fmt.Sprintf("holdctl: classifier train: %v", err), 2)
	}
	testSpec := c.String("test")
	if testSpec == "" {
		testSpec = spec + "#test"
	}
	testSet, err := imagedata.Open(testSpec, imagedata.Options{})
	if err != nil {
		return cli.Exit(fmt.Sprintf("holdctl: classifier train: test split: %v (name it with --test)", err), 2)
	}
	for _, d := range []*imagedata.Dataset{trainSet, testSet} {
		if d.Labels == nil {
			return usageErr("classifier train: %s has no labels (IDX label files, or class sub-folders)", d.Name())
		}
	}
	if testSet.C != trainSet.C || testSet.H != trainSet.H || testSet.W != trainSet.W {
		return usageErr("classifier train: test images %d×%d×%d differ from train images %d×%d×%d",
			testSet.C, testSet.H, testSet.W, trainSet.C, trainSet.H, trainSet.W)
	}
	classes := 0
	for _, y := range append(append([]int(nil), trainSet.Labels...), testSet.Labels...) {
		classes = max(classes, y+1)
	}
	cfg := layers.DefaultClassifier(trainSet.C, trainSet.H, trainSet.W, max(classes, 2))
	model, err := layers.NewClassifier(cfg, tensor.NewRNG(c.Uint64("seed")))
	if err != nil {
		return err
	}
	nTrain := trainSet.N
	if l := c.Int("limit"); l > 0 {
		nTrain = min(nTrain, l)
	}
	w := c.App.Writer
	fmt.Fprintf(w, "classifier: %d train images %d×%d×%d, %d classes, %d parameters, %d epochs of batch %d\n",
		nTrain, cfg.Channels, cfg.Height, cfg.Width, cfg.Classes, model.Params.Len(), epochs, batch)
	began := time.Now()
	r := rng.New(c.Uint64("seed") + 1)
	adam := optim.NewAdam(model.Params.Len())
	g := autograd.NewTape(tensor.CPU)
	dim := trainSet.Dimension()
	if err := checkBudget("batch", int64(batch)*int64(dim), 4*8); err != nil { // the batch and its activations, roughly
		return err
	}
	x := make([]float32, batch*dim)
	labels := make([]int, batch)
	perm := make([]int, nTrain)
	stepsPerEpoch := (nTrain + batch - 1) / batch
	total, step := epochs*stepsPerEpoch, 0
	for epoch := range epochs {
		for i := range perm {
			perm[i] = i
		}
		for i := len(perm) - 1; i > 0; i-- { // Fisher–Yates
			j := r.IntN(i + 1)
			perm[i], perm[j] = perm[j], perm[i]
		}
		var lossSum float64
		var correct int
		for lo := 0; lo < nTrain; lo += batch {
			b := min(batch, nTrain-lo)
			for k := range b {
				idx := perm[lo+k]
				trainSet.Scale(x[k*dim:(k+1)*dim], trainSet.Pixels(idx), false, nil)
				labels[k] = trainSet.Labels[idx]
			}
			g.Reset()
			model.Params.ZeroGrad()
			in := g.Const(tensor.FromSlice(x[:b*dim], b, cfg.Channels, cfg.Height, cfg.Width))
			_, logits := model.Forward(g, in)
			loss, dlogits, ok := layers.CrossEntropy(logits.T.Data(), labels[:b], cfg.Classes)
			if math.IsNaN(loss) || math.IsInf(loss, 0) { // as train does: stop before the weights turn to NaN
				return cli.Exit(fmt.Sprintf("holdctl: classifier train: stopped at epoch %d, step %d: the loss is %v; nothing was written. "+
					"Try a lower --lr, or check the data", epoch+1, step+1, loss), 1)
			}
			g.Backward(g.ScalarLoss("CrossEntropy", logits, float32(loss), tensor.FromSlice(dlogits, logits.Shape()...)))
			stepLR := lr * 0.5 * (1 + math.Cos(math.Pi*float64(step)/float64(total)))
			adam.Update(model.Params.Data, model.Params.Grad, stepLR)
			step++
			lossSum += loss * float64(b)
			correct += ok
		}
		acc, err := classifierAccuracy(model, testSet, batch)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "epoch %d/%d  train loss %.4f  train accuracy %.4f  test accuracy %.4f  %.0f s\n", epoch+1, epochs,
			lossSum/float64(nTrain), float64(correct)/float64(nTrain), acc, time.Since(began).Seconds())
		if epoch == epochs-1 {
			for i, v := range model.Params.Data {
				if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					return cli.Exit(fmt.Sprintf("holdctl: classifier train: weight %d is %v after training; nothing was written. Try a lower --lr", i, v), 1)
				}
			}
			info := fid.ClassifierInfo{Data: spec, TestAccuracy: acc, Epochs: epochs, Seconds: time.Since(began).Seconds()}
			if err := fid.SaveClassifier(c.String("out"), model, info); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote %s: test accuracy %.4f on %d images of %s, %.0f s\n", c.String("out"), acc, testSet.N, testSpec, info.Seconds)
		}
	}
	return nil
}

// specPath is the file or folder a data spec (KIND:PATH[#split]) reads, for the output guard.
func specPath(spec string) string {
	if _, p, ok := strings.Cut(spec, ":"); ok && imagedata.IsSpec(spec) {
		p, _, _ = strings.Cut(p, "#")
		return p
	}
	return spec
}

// classifierAccuracy is the share of the data set's images the model labels correctly.
func classifierAccuracy(m *layers.Classifier, d *imagedata.Dataset, batch int) (float64, error) {
	g := autograd.NewTape(tensor.CPU)
	g.SetNoGrad(true)
	dim := d.Dimension()
	x := make([]float32, batch*dim)
	correct := 0
	for lo := 0; lo < d.N; lo += batch {
		b := min(batch, d.N-lo)
		for k := range b {
			d.Scale(x[k*dim:(k+1)*dim], d.Pixels(lo+k), false, nil)
		}
		g.Reset()
		_, logits := m.Forward(g, g.Const(tensor.FromSlice(x[:b*dim], b, d.C, d.H, d.W)))
		_, _, ok := layers.CrossEntropy(logits.T.Data(), d.Labels[lo:lo+b], m.Config.Classes)
		correct += ok
	}
	return float64(correct) / float64(d.N), nil
}
