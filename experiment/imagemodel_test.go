package experiment

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
