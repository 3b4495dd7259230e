package experiment

import (
	"fmt"
	"io"
	"time"

	"holdgo/fid"
	"holdgo/imagedata"
	"holdgo/internal/budget"
	"holdgo/sample"
	"holdgo/train"
)

// FIDSampling is how holdctl fid draws the images of a trained run (fid.Config.Sample).
type FIDSampling struct {
	Spec   sample.Spec // the sampler
	N      int         // images drawn
	Seed   uint64
	Raw    bool      // the raw weights instead of the EMA
	Device string    // where the draw runs, for the progress line
	Log    io.Writer // progress
	// Prepare readies the trained image model and may adjust the sampler of its draw (a copy of Spec)
	// before the sampler is built (nil: nothing to do).
	Prepare func(m *train.Model, spec *sample.Spec) error
	// On returns s's sampling function for m on the device (Sampler.Sample, or SampleOn there).
	On func(s *sample.Sampler, m *train.Model) (func(n int, seed uint64) (*sample.Result, error), error)
	// Diverged reports how many of the n samples diverged (FID leaves them out).
	Diverged func(diverged, n int)
}

// Sample draws N samples of the trained image run spec for side ("ref" or "samples"), reporting to
// Log, and serves the converged ones with how they were drawn and came out. Errors of the input are
// *fid.InputError; Prepare's and On's errors come back as they are.
func (f FIDSampling) Sample(side, spec string) (fid.ImageSource, *fid.SamplingReport, error) {
	m, err := train.LoadModel(spec, f.Raw, "")
	if err != nil {
		return fid.ImageSource{}, nil, &fid.InputError{Msg: fmt.Sprintf("fid --%s %s: not a data set, image folder, .npy or .npz, and not a trained run: %v", side, spec, err)}
	}
	d, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return fid.ImageSource{}, nil, &fid.InputError{Msg: fmt.Sprintf("fid --%s %s: the run models %s, not images", side, spec, m.Source.Name())}
	}
	samplerSpec := f.Spec
	if f.Prepare != nil {
		if err := f.Prepare(m, &samplerSpec); err != nil {
			return fid.ImageSource{}, nil, err
		}
	}
	s, err := samplerSpec.Build(m.SDE, m.Score, d.Dimension())
	if err != nil {
		return fid.ImageSource{}, nil, &fid.InputError{Msg: err.Error()}
	}
	draw, err := f.On(s, m)
	if err != nil {
		return fid.ImageSource{}, nil, err
	}
	n := f.N
	if err := budget.CheckCount(int64(n)*int64(m.SDE.Blocks()), int64(d.Dimension())*8, "--n"); err != nil {
		return fid.ImageSource{}, nil, &fid.InputError{Msg: err.Error()}
	}
	start := time.Now()
	fmt.Fprintf(f.Log, "%s: sampling %d images with %s on %s …\n", side, n, s.Method.Name(), f.Device)
	res, err := draw(n, f.Seed)
	if err != nil {
		return fid.ImageSource{}, nil, err
	}
	q := sample.FirstBlock(res.X, n, m.SDE.Blocks(), d.Dimension())
	secs := time.Since(start).Seconds()
	fmt.Fprintf(f.Log, "%s: %d samples, NFE %d, %.1fs\n", side, n, res.NFE, secs)
	rep := &fid.SamplingReport{Sampler: s.Method.Name(), Grid: samplerSpec.Grid, NFE: res.NFE, Seed: f.Seed, Seconds: secs, Diverged: res.Diverged}
	rep.Measure(q, d.Dimension(), n)
	f.Diverged(res.Diverged, n)
	q, _ = sample.ConvergedRows(q, d.Dimension())
	src, err := fid.RowsSource(q, d.C, d.H, d.W)
	return src, rep, err
}
