package experiment

import (
	"fmt"
	"math"
	"strings"

	"holdgo/data"
	"holdgo/imagedata"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
)

// The data of holdctl nll: held-out points of a point model (with the exact −log p of mixture data
// beside the bound) and dequantised images.

// HeldOutSeed is the default seed of a point model's held-out draws: a fixed odd offset from the
// training seed, so it never equals it.
func HeldOutSeed(trainSeed uint64) uint64 { return trainSeed + 0x9e3779b97f4a7c15 }

// HeldOutPoints returns at most n held-out points of m's data, in float64 rows of the data's
// dimension, and says where they come from: the points of the .npy file path, or, when path is "", n
// fresh draws of the run's data with seed (a run on a .npy file resamples its training points: the
// description says they are not held out).
func HeldOutPoints(m *train.Model, path string, n int, seed uint64) ([]float64, string, error) {
	dim := m.Source.Dimension()
	var (
		points []float32
		from   string
	)
	if path != "" {
		x, d, err := data.ReadPoints(path)
		if err != nil {
			return nil, "", err
		}
		if d != dim {
			return nil, "", fmt.Errorf("%s holds %d-D points, the model is %d-D", path, d, dim)
		}
		points, from = x[:min(len(x), n*dim)], path
	} else {
		points = data.Draw(m.Source, rng.New(seed), n)
		from = fmt.Sprintf("fresh draws of %s (seed %d; training seed %d)", m.Source.Name(), seed, m.Config.Seed)
		if _, ok := m.Source.(*data.Points); ok {
			from += ", resampled from the training file: not held out (pass --data)"
		}
	}
	x := make([]float64, len(points))
	for i, v := range points {
		x[i] = float64(v)
	}
	return x, from, nil
}

// ExactNLL is the exact −log p per dimension of the points (rows of dim values) under a mixture's
// density, mean ± standard error, in nats and in bits.
func ExactNLL(mix data.Mixture, x []float64, dim int) (nats, bits sample.Stat) {
	exact := make([]float64, len(x)/dim)
	for i := range exact {
		exact[i] = -mix.LogDensity(x[i*dim:(i+1)*dim]) / float64(dim)
	}
	nats = sample.MeanSE(exact)
	return nats, sample.Stat{Mean: nats.Mean / math.Ln2, SE: nats.SE / math.Ln2}
}

// NLLImages opens the images holdctl nll evaluates an image model on: spec, or ("") the test split of
// the run's data set (a folder of images, images:PATH, has none: all of it). They must be a data set of
// images of the model's dimension; every error is about the input.
func NLLImages(m *train.Model, spec string) (*imagedata.Dataset, string, error) {
	if spec == "" {
		spec = m.Config.Data
		if base, _, _ := strings.Cut(spec, "#"); base == spec && !strings.HasPrefix(spec, "images:") {
			spec += "#test"
		}
	}
	if !imagedata.IsSpec(spec) {
		return nil, spec, fmt.Errorf("nll evaluates image data sets; %q is not one (use holdctl eval for point data)", spec)
	}
	ds, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return nil, spec, err
	}
	if ds.Dimension() != m.Source.Dimension() {
		return nil, spec, fmt.Errorf("%s has images of %d values, the model was trained on %d", spec, ds.Dimension(), m.Source.Dimension())
	}
	return ds, spec, nil
}

// ImageNLL is the likelihood bound in bits per dimension of the first n images of ds under m (div its
// score with vector–Jacobian products): the images dequantised with seed (DequantizedImages), the
// probability-flow ODE of cfg integrated with seed+1, the offset of 8-bit data in [−1, 1] added.
func ImageNLL(m *train.Model, div sample.DivScorer, ds *imagedata.Dataset, n int, cfg sample.LikelihoodConfig, seed uint64) (*sample.NLLResult, error) {
	x, err := DequantizedImages(ds, n, seed)
	if err != nil {
		return nil, err
	}
	cfg.OffsetBits = sample.OffsetCentered8Bit
	return sample.NLL(m.SDE, div, x, ds.Dimension(), cfg, seed+1)
}

// DequantizedImages returns the first n images of ds, each dequantised (sample.Dequantize: uniform
// noise within its 8-bit level, then [−1, 1]) with one generator seeded with seed.
func DequantizedImages(ds *imagedata.Dataset, n int, seed uint64) ([]float64, error) {
	d := ds.Dimension()
	x := make([]float64, n*d)
	r := rng.New(seed)
	for i := range n {
		if err := sample.Dequantize(x[i*d:(i+1)*d], ds.Pixels(i), r); err != nil {
			return nil, err
		}
	}
	return x, nil
}
