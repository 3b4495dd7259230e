package experiment

import (
	"encoding/binary"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/sample"
)

// writeIDX writes n blank images of side×side as an IDX file.
func writeIDX(t *testing.T, path string, n, side int) {
	t.Helper()
	b := binary.BigEndian.AppendUint32(nil, 0x803)
	for _, d := range []int{n, side, side} {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	b = append(b, make([]byte, n*side*side)...)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// OpenImageModel opens the shipped Fashion-MNIST model with images of its shape, and refuses too few
// images or another shape (a DataError naming the spec), images it cannot open (a DataError without
// one) and a checkpoint that is not there (not a DataError).
func TestOpenImageModel(t *testing.T) {
	dir := t.TempDir()
	fit, small := filepath.Join(dir, "fit.idx"), filepath.Join(dir, "small.idx")
	writeIDX(t, fit, 3, 28)
	writeIDX(t, small, 3, 8)
	const ckpt = "../models/fmnist-hold3"
	im, err := OpenImageModel(ckpt, "idx:"+fit, 3)
	if err != nil {
		t.Fatal(err)
	}
	if im.Spec != "idx:"+fit || im.Images.Len() != 3 || im.Data.H != 28 || im.SDE.Blocks() != 3 {
		t.Errorf("%+v", im)
	}
	var de *DataError
	for _, c := range []struct {
		spec string
		n    int
	}{{"idx:" + fit, 4}, {"idx:" + small, 1}} {
		if _, err := OpenImageModel(ckpt, c.spec, c.n); !errors.As(err, &de) || de.Spec != c.spec || !strings.HasPrefix(err.Error(), "--data "+c.spec+": 3 images of 1×") {
			t.Errorf("%s, n %d: %v", c.spec, c.n, err)
		}
	}
	if _, err := OpenImageModel(ckpt, "idx:"+filepath.Join(dir, "none"), 1); !errors.As(err, &de) || de.Spec != "" || !strings.HasSuffix(err.Error(), "(give --data KIND:DIR)") {
		t.Errorf("missing images: %v", err)
	}
	if _, err := OpenImageModel(filepath.Join(dir, "none"), "idx:"+fit, 1); err == nil || errors.As(err, &de) {
		t.Errorf("missing checkpoint: %v", err)
	}
}

// TrajectoryFigure writes a grid of 2 paths × n samples × 3 channels rows and one column per time.
func TestTrajectoryFigure(t *testing.T) {
	dir := t.TempDir()
	imgs := filepath.Join(dir, "imgs.idx")
	writeIDX(t, imgs, 2, 28)
	im, err := OpenImageModel("../models/fmnist-hold3", "idx:"+imgs, 1)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sample.Spec{Method: "em", NFE: 4, Grid: sample.GridQuadratic, End: 1e-3}.Build(im.SDE, im.Score, im.Data.Dimension())
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "traj.png")
	times, res, err := im.TrajectoryFigure(out, s, 3, 1, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) < 2 || len(times) > 3 || res.NFE != 4 {
		t.Errorf("times %v, NFE %d", times, res.NFE)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil || cfg.Height != 2+2*3*(28+2) || cfg.Width != 2+len(times)*(28+2) {
		t.Errorf("%d×%d PNG, %v", cfg.Width, cfg.Height, err)
	}
}
