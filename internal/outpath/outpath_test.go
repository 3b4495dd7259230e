package outpath

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"holdgo/internal/runlock"
)

func write(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

var (
	npyHead  = []byte("\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n")
	pngHead  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	stHead   = append([]byte{2, 0, 0, 0, 0, 0, 0, 0}, []byte("{}")...)
	zipHead  = []byte("PK\x03\x04\x14\x00\x00\x00\x00\x00sigma.npy")
	pthHead  = []byte("PK\x03\x04\x14\x00\x00\x00\x00\x00archive/data.pkl")
	pickle   = []byte{0x80, 0x02, '}', 'q', 0}
	textHead = []byte("sampler,grid,nfe\nhold-lt,quadratic,10\n")
)

func TestSniffBytes(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		want Kind
	}{
		{npyHead, NPY}, {pngHead, PNG}, {stHead, Safetensors}, {zipHead, NPZ}, {pthHead, Pickle}, {pickle, Pickle},
		{textHead, Text}, {[]byte("é"), Text}, {[]byte{}, Text}, {[]byte{0, 1, 2, 3}, Binary}, {[]byte{0xff, 0xfe, 0x41}, Binary},
		{[]byte{0, 0, 0, 0, 0, 0, 0, 0, '{'}, Binary}, // a safetensors header of length 0 is not one
		// A rune cut by the 512-byte window is still text.
		{[]byte(strings.Repeat("a", 511) + "é")[:512], Text},
		{[]byte(strings.Repeat("a", 510) + "€")[:512], Text},
		{[]byte(strings.Repeat("a", 509) + "\xff\xfeA"), Binary},
	} {
		if got := SniffBytes(c.b); got != c.want {
			t.Errorf("SniffBytes(%q) = %s, want %s", c.b, got, c.want)
		}
	}
}

// TestCheck: every refusal of the guard wraps ErrRefused and is one line; what it allows is allowed.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	write(t, in, npyHead)
	hard := filepath.Join(dir, "hard.npy") // another name of the input
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "study.csv")
	write(t, csv, textHead)
	empty := filepath.Join(dir, "empty.png")
	write(t, empty, nil)
	link := filepath.Join(dir, "link.npy")
	if err := os.Symlink(filepath.Join(dir, "new.npy"), link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.png")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	inputDir := filepath.Join(dir, "datadir") // an input directory: its run files are inputs
	if err := os.Mkdir(inputDir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run") // a run directory (checkpoint next to a config)
	if err := os.Mkdir(run, 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(run, "ckpt.safetensors"), stHead)
	write(t, filepath.Join(run, "config.yaml"), []byte("sde: hold\n"))

	g := New(false)
	g.Input(in, "", inputDir, filepath.Join(dir, "missing-input.npy"))
	for _, c := range []struct {
		path, why string
		kind      Kind
	}{
		{"", "an empty output path", NPY},
		{filepath.Join(dir, "nodir", "x.npy"), "does not exist", NPY},
		{filepath.Join(in, "x.npy"), "is not a directory", NPY},
		{dir, "is a directory", NPY},
		{link, "symbolic link", NPY},
		{fifo, "not a regular file", PNG},
		{in, "is an input of this command", NPY},
		{filepath.Join(dir, ".", "in.npy"), "is an input of this command", NPY},
		{hard, "is an input of this command", NPY},
		{filepath.Join(dir, "missing-input.npy"), "is an input of this command", NPY},
		{filepath.Join(inputDir, "data.npy"), "is an input of this command", NPY},
		{filepath.Join(run, "ckpt.safetensors"), "belongs to the run", Safetensors},
		{filepath.Join(run, "log.csv"), "belongs to the run", Text},
		{csv, "holds a text file, not a .npy array", NPY},
	} {
		err := g.Check(c.path, c.kind)
		if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), c.why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Check(%q, %s): %v, want a one-line refusal saying %q", c.path, c.kind, err, c.why)
		}
	}
	for _, c := range []struct {
		path string
		kind Kind
	}{
		{filepath.Join(dir, "new.npy"), NPY},      // a new file
		{csv, Text},                               // a file of the kind written
		{empty, PNG},                              // an empty file of any kind
		{filepath.Join(run, "samples.png"), PNG},  // a new file in a run nobody holds
		{filepath.Join(inputDir, "out.png"), PNG}, // not a run file of the input directory
		{filepath.Join(dir, "in2.npy"), NPY},      // a name next to the input
	} {
		if err := g.Check(c.path, c.kind); err != nil {
			t.Errorf("Check(%q, %s): %v, want it allowed", c.path, c.kind, err)
		}
	}
	// --force replaces a file of another kind, but never an input or a run's file.
	f := New(true)
	f.Input(in)
	if err := f.Check(csv, NPY); err != nil {
		t.Errorf("forced, a file of another kind: %v", err)
	}
	for _, p := range []string{in, filepath.Join(run, "config.yaml")} {
		if err := f.Check(p, Text); !errors.Is(err, ErrRefused) {
			t.Errorf("forced, Check(%s): %v, want a refusal", p, err)
		}
	}
	// A run directory whose lock is held: nothing in it may be written.
	live := filepath.Join(dir, "live")
	if err := os.Mkdir(live, 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := runlock.Acquire(live)
	if err != nil {
		t.Fatal(err)
	}
	if !IsRunDir(live) {
		t.Error("a directory with a lock file is not a run directory")
	}
	if err := New(true).Check(filepath.Join(live, "samples.png"), PNG); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "writing now") {
		t.Errorf("a file in a locked run: %v", err)
	}
	lock.Release()
	if err := New(true).Check(filepath.Join(live, "samples.png"), PNG); err != nil {
		t.Errorf("a file in a run whose lock was released: %v", err)
	}
}

func TestIsRunDir(t *testing.T) {
	dir := t.TempDir()
	if IsRunDir(dir) {
		t.Error("an empty directory is a run directory")
	}
	write(t, filepath.Join(dir, "ckpt.safetensors"), stHead)
	if IsRunDir(dir) {
		t.Error("a checkpoint without a config is a run directory")
	}
	write(t, filepath.Join(dir, "config.yaml"), []byte("x: 1\n"))
	if !IsRunDir(dir) {
		t.Error("a checkpoint next to a config is not a run directory")
	}
}

func TestSniff(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	write(t, p, append(pngHead, make([]byte, 4096)...))
	if k, err := Sniff(p); err != nil || k != PNG {
		t.Errorf("Sniff: %s, %v", k, err)
	}
	if _, err := Sniff(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Sniff of a missing file: %v", err)
	}
}

func TestCheckSpace(t *testing.T) {
	dir := t.TempDir()
	if err := CheckSpace(filepath.Join(dir, "x.npy"), 1); err != nil {
		t.Errorf("one byte: %v", err)
	}
	err := CheckSpace(filepath.Join(dir, "x.npy"), math.MaxUint64)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "free") {
		t.Errorf("2⁶⁴ bytes: %v", err)
	}
}

// CheckAll skips empty paths, names the flag of a refused output (without Check's "refused: "), and
// refuses two outputs that are one file, naming both flags.
func TestCheckAll(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.npy")
	write(t, in, npyHead)
	g := New(false)
	g.Input(in)
	a, b := filepath.Join(dir, "a.png"), filepath.Join(dir, "b.csv")
	if err := g.CheckAll(Output{"out", a, PNG}, Output{"csv", b, Text}, Output{"none", "", PNG}); err != nil {
		t.Fatal(err)
	}
	err := g.CheckAll(Output{"out", a, PNG}, Output{"npy", in, NPY})
	if err == nil || !strings.HasPrefix(err.Error(), "--npy: "+in+" is an input") {
		t.Errorf("an input as output: %v", err)
	}
	err = g.CheckAll(Output{"out", a, PNG}, Output{"pic", filepath.Join(dir, ".", "a.png"), PNG})
	if err == nil || err.Error() != "--pic "+filepath.Join(dir, "a.png")+": the same file as --out; give each output its own file" {
		t.Errorf("one file twice: %v", err)
	}
}

// TestInputTree: no output anywhere inside a data-set directory the command reads, at any depth,
// through a link to it, or with --force; beside it is fine; a file given to InputTree is an input.
func TestInputTree(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "imgs")
	sub := filepath.Join(data, "class0")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(sub, "a.png")
	if err := os.WriteFile(img, []byte("\x89PNG\r\n\x1a\nxx"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(root, "set.tgz")
	if err := os.WriteFile(archive, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		g := New(force)
		g.InputTree(data, archive, "")
		for _, out := range []string{img, filepath.Join(sub, "new.png"), filepath.Join(data, "new.png"), filepath.Join(link, "class0", "b.png"), archive} {
			if err := g.Check(out, PNG); !errors.Is(err, ErrRefused) {
				t.Errorf("force %v: %s inside the data set (or the archive itself) accepted: %v", force, out, err)
			}
		}
		for _, out := range []string{filepath.Join(root, "grid.png"), filepath.Join(root, "imgs2.png")} {
			if err := g.Check(out, PNG); err != nil {
				t.Errorf("force %v: %s beside the data set refused: %v", force, out, err)
			}
		}
	}
}
