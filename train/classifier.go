package train

import (
	"fmt"
	"math"
	"time"

	"holdgo/autograd"
	"holdgo/imagedata"
	"holdgo/layers"
	"holdgo/optim"
	"holdgo/rng"
	"holdgo/tensor"
)

// ClassifierOptions configures a ClassifierRun.
type ClassifierOptions struct {
	Epochs int     // passes over the training images
	Batch  int     // batch size
	LR     float64 // peak learning rate (cosine decay to 0)
	Limit  int     // at most this many training images (0: all)
	Seed   uint64  // seed of the initialisation and the shuffling
}

// ClassifierEpoch is what one epoch of a ClassifierRun measured.
type ClassifierEpoch struct {
	Epoch, Epochs int
	Loss          float64 // mean training cross-entropy
	TrainAccuracy float64
	TestAccuracy  float64
	Began         time.Time // when the training began
}

// ClassifierRun trains the small CNN classifier (layers.DefaultClassifier) of holdctl classifier train,
// the offline feature network of holdctl fid --features: Adam with a cosine learning-rate decay on the
// training images scaled to [−1, 1], with the test accuracy after each epoch.
type ClassifierRun struct {
	Model       *layers.Classifier
	Config      layers.ClassifierConfig
	Train, Test *imagedata.Dataset
	NTrain      int // training images used (Limit)
	opt         ClassifierOptions
}

// OpenClassifierData opens the labelled train images of spec and the test images of testSpec ("":
// the #test split of spec), which must have labels and the train images' size; it returns the test
// spec used. Its errors are about the input (ExitError of status 2).
func OpenClassifierData(spec, testSpec string) (trainSet, testSet *imagedata.Dataset, test string, err error) {
	if trainSet, err = imagedata.Open(spec, imagedata.Options{}); err != nil {
		return nil, nil, "", inputErr("classifier train: %v", err)
	}
	if testSpec == "" {
		testSpec = spec + "#test"
	}
	if testSet, err = imagedata.Open(testSpec, imagedata.Options{}); err != nil {
		return nil, nil, "", inputErr("classifier train: test split: %v (name it with --test)", err)
	}
	for _, d := range []*imagedata.Dataset{trainSet, testSet} {
		if d.Labels == nil {
			return nil, nil, "", inputErr("classifier train: %s has no labels (IDX label files, or class sub-folders)", d.Name())
		}
	}
	if testSet.C != trainSet.C || testSet.H != trainSet.H || testSet.W != trainSet.W {
		return nil, nil, "", inputErr("classifier train: test images %d×%d×%d differ from train images %d×%d×%d",
			testSet.C, testSet.H, testSet.W, trainSet.C, trainSet.H, trainSet.W)
	}
	return trainSet, testSet, testSpec, nil
}

// NewClassifierRun builds the classifier for labelled train and test images of the same size, with as
// many classes as the labels of either name.
func NewClassifierRun(trainSet, testSet *imagedata.Dataset, opt ClassifierOptions) (*ClassifierRun, error) {
	classes := 0
	for _, y := range append(append([]int(nil), trainSet.Labels...), testSet.Labels...) {
		classes = max(classes, y+1)
	}
	cfg := layers.DefaultClassifier(trainSet.C, trainSet.H, trainSet.W, max(classes, 2))
	model, err := layers.NewClassifier(cfg, rng.New(opt.Seed))
	if err != nil {
		return nil, err
	}
	nTrain := trainSet.N
	if opt.Limit > 0 {
		nTrain = min(nTrain, opt.Limit)
	}
	return &ClassifierRun{Model: model, Config: cfg, Train: trainSet, Test: testSet, NTrain: nTrain, opt: opt}, nil
}

// Run trains for the configured epochs, calling epochDone after each. A non-finite loss stops it with
// an ExitError of status 1 before the weights turn to NaN, as Run does.
func (r *ClassifierRun) Run(epochDone func(ClassifierEpoch)) error {
	model, cfg, trainSet := r.Model, r.Config, r.Train
	epochs, batch, lr, nTrain := r.opt.Epochs, r.opt.Batch, r.opt.LR, r.NTrain
	began := time.Now()
	src := rng.New(r.opt.Seed + 1)
	opt := newCPUOptimizer(optim.NewAdam(model.Params.Len()), nil)
	g := autograd.NewTape(tensor.CPU)
	dim := trainSet.Dimension()
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
			j := src.IntN(i + 1)
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
				return &ExitError{Err: fmt.Errorf("classifier train: stopped at epoch %d, step %d: the loss is %v; nothing was written. "+
					"Try a lower --lr, or check the data", epoch+1, step+1, loss), Status: 1}
			}
			g.Backward(g.ScalarLoss("CrossEntropy", logits, float32(loss), tensor.FromSlice(dlogits, logits.Shape()...)))
			stepLR := lr * 0.5 * (1 + math.Cos(math.Pi*float64(step)/float64(total)))
			if err := opt.step(model.Params, stepLR, 0); err != nil {
				return fmt.Errorf("classifier train: step %d: %w", step+1, err)
			}
			step++
			lossSum += loss * float64(b)
			correct += ok
		}
		acc, err := ClassifierAccuracy(model, r.Test, batch)
		if err != nil {
			return err
		}
		epochDone(ClassifierEpoch{Epoch: epoch + 1, Epochs: epochs, Loss: lossSum / float64(nTrain),
			TrainAccuracy: float64(correct) / float64(nTrain), TestAccuracy: acc, Began: began})
	}
	for i, v := range model.Params.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return &ExitError{Err: fmt.Errorf("classifier train: weight %d is %v after training; nothing was written. Try a lower --lr", i, v), Status: 1}
		}
	}
	return nil
}

// ClassifierAccuracy is the share of the data set's images the model labels correctly.
func ClassifierAccuracy(m *layers.Classifier, d *imagedata.Dataset, batch int) (float64, error) {
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
