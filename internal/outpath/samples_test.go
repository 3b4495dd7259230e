package outpath

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CheckSamples refuses another extension, a missing directory, a directory (with fileOnly) and an
// array without room, each naming the flag, and tells a picture from an array.
func TestCheckSamples(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d.npy"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path     string
		bytes    uint64
		fileOnly bool
		picture  bool
		refusal  string // "" when accepted
	}{
		{"a.npy", 128, true, false, ""},
		{"a.png", math.MaxUint64, true, true, ""},
		{"a.txt", 128, true, false, "--out DIR/a.txt: want a .npy or .png file"},
		{"none/a.npy", 128, true, false, "--out DIR/none/a.npy: stat DIR/none: no such file"},
		{"d.npy", 128, true, false, "--out DIR/d.npy is a directory or another non-file; give a file name ending .npy or .png"},
		{"d.npy", 128, false, false, ""}, // the guard refuses it later
		{"a.npy", math.MaxUint64, true, false, "--out: DIR/a.npy needs about"},
	} {
		path := filepath.Join(dir, tc.path)
		picture, err := CheckSamples("out", path, tc.bytes, tc.fileOnly)
		want := strings.ReplaceAll(tc.refusal, "DIR", dir)
		switch {
		case want == "" && (err != nil || picture != tc.picture):
			t.Errorf("%s: picture %v, %v; want picture %v and no error", tc.path, picture, err, tc.picture)
		case want != "" && (err == nil || !strings.HasPrefix(err.Error(), want)):
			t.Errorf("%s (fileOnly %v): got %v, want %q…", tc.path, tc.fileOnly, err, want)
		}
	}
}

// Data: an image folder is a tree no output enters, an IDX directory's files are inputs one by one (a
// new file beside them is allowed), a run directory and a file are plain inputs.
func TestGuardData(t *testing.T) {
	dir := t.TempDir()
	images, idx, run := filepath.Join(dir, "images"), filepath.Join(dir, "idx"), filepath.Join(dir, "run")
	for _, d := range []string{images, idx, run} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(idx, "train-images-idx3-ubyte"), []byte{0, 0, 8, 3})
	write(t, filepath.Join(run, "ckpt.safetensors"), stHead)
	write(t, filepath.Join(dir, "x.npy"), npyHead)
	g := New(false)
	g.Data("", "images:"+images, "fashion-mnist:"+idx+"#test", run, filepath.Join(dir, "x.npy"))
	for _, tc := range []struct {
		path    string
		refused bool
	}{
		{filepath.Join(images, "new.png"), true},
		{filepath.Join(idx, "train-images-idx3-ubyte"), true},
		{filepath.Join(idx, "new.npy"), false},
		{filepath.Join(run, "ckpt.safetensors"), true},
		{filepath.Join(dir, "x.npy"), true},
		{filepath.Join(dir, "y.npy"), false},
	} {
		if err := g.Check(tc.path, KindByExt(tc.path)); (err != nil) != tc.refused {
			t.Errorf("%s: %v, want refused %v", tc.path, err, tc.refused)
		}
	}
}

func TestCheckPicture(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d.png"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"a.png":      "",
		"a.npy":      "--fig DIR/a.npy: want a .png file",
		"none/a.png": "--fig DIR/none/a.png: stat DIR/none: no such file",
		"d.png":      "--fig DIR/d.png is a directory",
	} {
		err := CheckPicture("fig", filepath.Join(dir, name))
		want = strings.ReplaceAll(want, "DIR", dir)
		if (want == "") != (err == nil) || err != nil && !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", name, err, want)
		}
	}
}
