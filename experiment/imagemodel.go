package experiment

import (
	"fmt"

	"holdgo/imagedata"
	"holdgo/sample"
	"holdgo/train"
)

// ImageModel is a trained image model with the images it is looked at on (holdctl plot trajectory,
// holdctl model x0).
type ImageModel struct {
	*train.Model
	Data   *imagedata.Dataset // the model's data set (its shape)
	Images *imagedata.Dataset // the images
	Spec   string             // the images' data-set spec
}

// DataError is an error of the images of OpenImageModel: they could not be opened (Spec is ""), or
// they are too few or of another shape than the model's.
type DataError struct {
	Spec string
	Err  error
}

func (e *DataError) Error() string {
	if e.Spec == "" {
		return fmt.Sprintf("--data: %v (give --data KIND:DIR)", e.Err)
	}
	return fmt.Sprintf("--data %s: %v", e.Spec, e.Err)
}

func (e *DataError) Unwrap() error { return e.Err }

// OpenImageModel loads the image model of ckpt (a run directory or checkpoint, EMA weights) and opens
// the images of spec ("": the test split of the run's data, imagedata.TestSplit), which must hold at
// least n images of the model's shape. An error of the images is a *DataError.
func OpenImageModel(ckpt, spec string, n int) (*ImageModel, error) {
	m, err := train.LoadModel(ckpt, false, "")
	if err != nil {
		return nil, err
	}
	ds, ok := m.Source.(*imagedata.Dataset)
	if !ok {
		return nil, fmt.Errorf("%s models %s, not images", ckpt, m.Source.Name())
	}
	if spec == "" {
		spec = imagedata.TestSplit(m.Config.Data)
	}
	test, err := imagedata.Open(spec, imagedata.Options{})
	if err != nil {
		return nil, &DataError{Err: err}
	}
	if test.C != ds.C || test.H != ds.H || test.W != ds.W || test.Len() < n {
		return nil, &DataError{Spec: spec, Err: fmt.Errorf("%d images of %d×%d×%d; the model needs %d of %d×%d×%d",
			test.Len(), test.C, test.H, test.W, n, ds.C, ds.H, ds.W)}
	}
	return &ImageModel{Model: m, Data: ds, Images: test, Spec: spec}, nil
}

// TrajectoryFigure writes the paper's Figures 8–9 for im to path (a PNG grid, tiles repeated scale
// times): n samples drawn with s and n of im.Images noised forward, every channel of their state at nt
// times (TrajectoryTimes; times on one grid point count once), a row per channel and a column per
// time. It returns the times and the sampler's result.
func (im *ImageModel) TrajectoryFigure(path string, s *sample.Sampler, nt, n, scale int, seed uint64) ([]float64, *sample.Result, error) {
	times, err := TrajectoryTimes(im.Model, s.Grid, nt)
	if err != nil {
		return nil, nil, err
	}
	tiles, res, err := Trajectory(im.Model, s, im.Images, times, n, seed)
	if err != nil {
		return nil, nil, err
	}
	d := im.Data
	if err := imagedata.WriteGrid(path, tiles, 2*n*im.SDE.Blocks()*len(times), d.C, d.H, d.W, len(times), scale); err != nil {
		return nil, nil, err
	}
	return times, res, nil
}
