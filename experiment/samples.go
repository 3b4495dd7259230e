package experiment

import (
	"fmt"
	"math"
	"path/filepath"

	"holdgo/data"
	"holdgo/imagedata"
	"holdgo/internal/atomicfile"
	"holdgo/metrics"
	"holdgo/plot"
	"holdgo/rng"
	"holdgo/sample"
	"holdgo/train"
)

// WriteSamples writes points (n×dim) as .npy or as a picture (.png):
// a histogram for 1-D data, a scatter plot for 2-D.
func WriteSamples(path string, q []float32, dim int, title string) error {
	if filepath.Ext(path) == ".npy" {
		return data.WriteNPY32(path, q, len(q)/dim, dim)
	}
	q, _ = sample.ConvergedRows(q, dim) // one path at 1e9 would shrink the rest to a dot
	switch dim {
	case 1:
		return plot.Histogram(path, q, plot.HistogramOptions{Title: title, Bins: 200})
	case 2:
		return plot.Scatter(path, q, plot.ScatterOptions{Title: title})
	}
	return fmt.Errorf("%s: a picture needs 1-D or 2-D points, these have %d dimensions; write .npy instead", path, dim)
}

// WriteModelSamples writes samples q (n × dim) of a model trained on src:
// image data sets go to PNG as an image grid, everything else through
// WriteSamples.
func WriteModelSamples(src data.Source, path string, q []float32, dim int, title string) error {
	if d, ok := src.(*imagedata.Dataset); ok && filepath.Ext(path) == ".png" {
		return writeImageGrid(path, q, d.C, d.H, d.W)
	}
	return WriteSamples(path, q, dim, title)
}

// writeImageGrid writes samples q (n × C·H·W in [−1, 1]) as an about
// square PNG grid, pixels doubled for images up to 32×32.
func writeImageGrid(path string, q []float32, c, h, w int) error {
	dim := c * h * w
	if len(q)%dim != 0 {
		return fmt.Errorf("%s: %d values are not whole %d×%d×%d images", path, len(q), c, h, w)
	}
	n := len(q) / dim
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	scale := 1
	if h <= 32 {
		scale = 2
	}
	return imagedata.WriteGrid(path, q, n, c, h, w, cols, scale)
}

// Demo's measures of 2-D samples (holdctl demo).
const (
	DemoProjections = 1024 // directions: the estimate's own noise stays at a few per cent
	DemoReps        = 5    // fresh data sets
)

// DemoScores is what holdctl demo reports of its samples: the sliced Wasserstein-2 distance to fresh
// data next to the distance between two independent data sets of the same size, each the mean ± s.e.
// over DemoReps fresh sets, and the improved precision and recall (nil when there are too few
// samples).
type DemoScores struct {
	SW, Floor sample.Stat
	PR        *metrics.RollsReport
}

// ScoreDemo measures the converged 2-D samples q against n fresh points of src per repetition, drawn
// from seed. Between clusters as far apart as the five rolls, W2 is dominated by how the points happen
// to split among them, so one pair of data sets gives a floor anywhere in ±30%: it averages over
// several fresh sets (the same ones for the samples and for the floor).
func ScoreDemo(q []float32, src data.Source, n int, seed uint64) (*DemoScores, error) {
	r := rng.New(seed)
	var (
		sw, floor []float64
		pr        *metrics.RollsReport
		err       error
	)
	for k := range DemoReps {
		fresh, fresh2 := data.Draw(src, r, n), data.Draw(src, r, n)
		if k == 0 && len(q)/2 > metrics.DefaultPRK {
			if pr, err = metrics.SamplePrecisionRecall(q, fresh2[:len(q)], fresh, 2, metrics.DefaultPRK, src); err != nil {
				return nil, err
			}
		}
		a, err := metrics.SlicedWasserstein(q, fresh, 2, 2, DemoProjections, uint64(7+k))
		if err != nil {
			return nil, err
		}
		b, err := metrics.SlicedWasserstein(fresh2, fresh, 2, 2, DemoProjections, uint64(7+k))
		if err != nil {
			return nil, err
		}
		sw, floor = append(sw, a), append(floor, b)
	}
	return &DemoScores{SW: sample.MeanSE(sw), Floor: sample.MeanSE(floor), PR: pr}, nil
}

// EachFunc draws n samples chunk by chunk, calling emit with each chunk's states (sample.Sampler.Each
// or EachOn, as Sampler.EachOnDevice returns them).
type EachFunc = sample.EachFunc

// SampleFiles draws n samples of m with each and writes their data block (holdctl sample): to the
// first .npy file chunk by chunk (bounded memory for any n), copied to the other .npy files, and as
// pictures (WriteModelSamples, titled with the SDE, method and NFE), which keep every sample in memory.
func SampleFiles(m *train.Model, method string, each EachFunc, n int, seed uint64, npys, pics []string) (sample.StreamResult, error) {
	dim, blocks := m.Source.Dimension(), m.SDE.Blocks()
	var (
		res  sample.StreamResult
		kept []float32
		err  error
	)
	produce := func(emit func([]float32) error) error {
		var err error
		res, err = each(n, seed, func(_ int, x []float64) error {
			q := sample.FirstBlock(x, len(x)/(blocks*dim), blocks, dim)
			if len(pics) > 0 {
				kept = append(kept, q...)
			}
			if emit != nil {
				return emit(q)
			}
			return nil
		})
		return err
	}
	if len(npys) > 0 {
		err = data.StreamNPY32(npys[0], []int{n, dim}, produce)
	} else {
		err = produce(nil)
	}
	if err != nil {
		return res, err
	}
	for _, o := range npys[min(1, len(npys)):] {
		if err := atomicfile.Copy(npys[0], o); err != nil {
			return res, err
		}
	}
	for _, o := range pics {
		if err := WriteModelSamples(m.Source, o, kept, dim, fmt.Sprintf("%s, %s, NFE %d", m.Config.SDE, method, res.NFE)); err != nil {
			return res, err
		}
	}
	return res, nil
}
