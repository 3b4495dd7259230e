package experiment

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"holdgo/internal/outpath"
	"holdgo/sample"
)

// openImageModelAs is OpenImageModel with every error an InputError of cmd: a *DataError's as
// "cmd <error>", another's as "cmd: <error>".
func openImageModelAs(cmd, ckpt, spec string, n int) (*ImageModel, error) {
	im, err := OpenImageModel(ckpt, spec, n)
	var de *DataError
	switch {
	case errors.As(err, &de):
		return nil, inputErr("%s %v", cmd, de)
	case err != nil:
		return nil, inputErr("%s: %v", cmd, err)
	}
	return im, nil
}

// TrajectoryRun is holdctl plot trajectory after its flags are read: the paper's Figures 8–9 for a
// trained image model.
type TrajectoryRun struct {
	Out, Ckpt, Data string            // the figure; the model; the images of the forward path ("": the run's test split)
	Spec            sample.Spec       // the sampler of the flags
	IsSet           func(string) bool // whether a flag was given (ImageDefaults)
	N, Times, Scale int               // samples and test images; times along each path; pixel repetition
	Seed            uint64
}

// RunTrajectory checks the figure's file, opens the model and its images (the figure may not land in
// their data set or replace the run's files), builds the sampler with an image network's defaults,
// writes the figure (ImageModel.TrajectoryFigure) and says so on w. Errors of the settings and inputs
// are InputErrors.
func RunTrajectory(r TrajectoryRun, w io.Writer) error {
	if err := outpath.CheckFigure(false, "out", r.Out); err != nil {
		return &InputError{err}
	}
	n := r.N
	im, err := openImageModelAs("plot trajectory", r.Ckpt, r.Data, n)
	if err != nil {
		return err
	}
	guard := outpath.New(false)
	guard.Input(r.Ckpt)
	guard.Data(im.Spec)
	if err := guard.CheckAll(outpath.Output{Flag: "out", Path: r.Out, Kind: outpath.PNG}); err != nil {
		return &InputError{err}
	}
	m := im.Model
	spec := r.Spec
	ImageDefaults(r.IsSet, m, &spec, w, false)
	s, err := spec.Build(m.SDE, m.Score, im.Data.Dimension())
	if err != nil {
		return &InputError{err}
	}
	times, res, err := im.TrajectoryFigure(r.Out, s, r.Times, n, r.Scale, r.Seed)
	if err != nil {
		return err
	}
	var labels []string
	for _, t := range times {
		labels = append(labels, fmt.Sprintf("%.4g", t))
	}
	fmt.Fprintf(w, "wrote %s: %d samples × %d channels, sampler %s (NFE %d), then %d test images of %s forward; columns at t = %s\n",
		r.Out, n, m.SDE.Blocks(), s.Method.Name(), res.NFE, n, im.Spec, strings.Join(labels, ", "))
	return nil
}

// X0Run is holdctl model x0 after its flags are read: the error of a trained image model's x̂₀ along
// the forward path.
type X0Run struct {
	Ckpt, Data string // the model; its images ("": the run's test split)
	N, Levels  int
	SigmaMin   float64 // the smallest noise level, below σ(T)
	Seed       uint64
	JSON       bool // JSON lines instead of the table
}

// RunX0 opens the model and its images, checks SigmaMin and writes the table of X0Errors on w. Errors
// of the settings and inputs are InputErrors.
func RunX0(r X0Run, w io.Writer) error {
	n := r.N
	im, err := openImageModelAs("model x0", r.Ckpt, r.Data, n)
	if err != nil {
		return err
	}
	m, test, spec := im.Model, im.Images, im.Spec
	sde := m.SDE
	smax, err := sample.NoiseLevel(sde, sde.Horizon())
	if err != nil {
		return err
	}
	smin := r.SigmaMin
	if !(smin > 0 && smin < smax) {
		return inputErr("model x0: --sigma-min %g must be in (0, %g)", smin, smax)
	}
	title := fmt.Sprintf("x̂₀ of %s on %d images of %s (%s)", r.Ckpt, n, spec, m.Config.SDE)
	err = X0Errors(m, test, n, r.Levels, smax, smin, r.Seed, X0Table(w, title, r.JSON))
	var le *LevelError
	if errors.As(err, &le) {
		return inputErr("model x0: %v", le)
	}
	return err
}
