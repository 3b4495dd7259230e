// Package outpath is the one output guard of holdctl: every command that
// writes a file asks it first, and it refuses (with a one-line reason) a
// target that is one of the command's own inputs, a file that belongs to a
// run directory (or any file in a run directory whose lock another process
// holds), a directory or special file, or a file of another type than the
// one written (unless forced). The writes themselves are atomic
// (internal/atomicfile), so a refused or failed write leaves the old file.
//
// It also holds the rest of holdctl's output policy: which paths of the data
// sets a command reads are inputs (Guard.Data), and the checks of a file of
// samples before anything is computed (CheckSamples: its extension, its
// directory, the room for it; MaxPictureValues).
package outpath

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"holdgo/internal/runlock"
)

// Kind is the type of a file, as its first bytes tell it.
type Kind string

// The kinds holdctl writes (and a few it reads).
const (
	NPY         Kind = "a .npy array"
	NPZ         Kind = "a .npz archive"
	PNG         Kind = "a PNG picture"
	Safetensors Kind = "a safetensors checkpoint"
	Text        Kind = "a text file" // CSV, Markdown, YAML, JSON
	Pickle      Kind = "a PyTorch pickle"
	Profile     Kind = "a pprof profile" // gzip-compressed protocol buffer
	Binary      Kind = "a binary file"
)

// ErrRefused is wrapped by every refusal: an input error (exit status 2).
var ErrRefused = errors.New("refused")

// RunFiles are the files a run directory's owner (holdctl train) writes:
// no other command may replace them.
var RunFiles = []string{"ckpt.safetensors", "config.yaml", "log.csv", "data.npy", runlock.Name}

// KindByExt is the kind of file a path's extension says is written there.
func KindByExt(path string) Kind {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".npy":
		return NPY
	case ".npz":
		return NPZ
	case ".png":
		return PNG
	case ".safetensors":
		return Safetensors
	case ".prof", ".pprof", ".pb.gz":
		return Profile
	}
	return Text
}

// Guard holds the inputs of one command, which its outputs may not replace.
type Guard struct {
	force  bool
	inputs []input
	trees  []string // directories read whole (InputTree), links resolved
}

type input struct {
	path string
	info os.FileInfo
}

// New returns a guard; force allows replacing a file of another kind.
func New(force bool) *Guard { return &Guard{force: force} }

// Input records paths the command reads (files, or directories whose files
// it reads). Missing paths are recorded by name.
func (g *Guard) Input(paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		in := input{path: abs(p)}
		if st, err := os.Stat(p); err == nil {
			in.info = st
		}
		g.inputs = append(g.inputs, in)
	}
}

// InputTree records data-set directories the command reads whole, at any depth (an image folder, an
// IDX or CIFAR-10 directory): no output may be written anywhere inside one, with or without --force,
// since a new or replaced file there changes the data. A path that is not a directory is recorded as
// Input records it (an archive or a file).
func (g *Guard) InputTree(paths ...string) {
	for _, p := range paths {
		if p == "" {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			g.Input(p)
			continue
		}
		g.trees = append(g.trees, resolved(p))
	}
}

// resolved is p absolute with its links resolved where they exist.
func resolved(p string) string {
	a := abs(p)
	if r, err := filepath.EvalSymlinks(a); err == nil {
		return r
	}
	return a
}

// within reports whether path lies inside dir (both absolute, links resolved).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return filepath.Clean(p)
}

// Check refuses writing a file of kind at path (see the package
// documentation). The error wraps ErrRefused and says what to do.
func (g *Guard) Check(path string, kind Kind) error {
	if path == "" {
		return fmt.Errorf("%w: an empty output path", ErrRefused)
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil {
		return fmt.Errorf("%w: %s: its directory %s does not exist (create it first)", ErrRefused, path, dir)
	} else if !st.IsDir() {
		return fmt.Errorf("%w: %s: %s is not a directory", ErrRefused, path, dir)
	}
	target := abs(path)
	lst, lerr := os.Lstat(path)
	if lerr == nil {
		switch {
		case lst.IsDir():
			return fmt.Errorf("%w: %s is a directory; give a file name", ErrRefused, path)
		case lst.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("%w: %s is a symbolic link; give the file it points to, or another name", ErrRefused, path)
		case !lst.Mode().IsRegular():
			return fmt.Errorf("%w: %s is not a regular file (a FIFO, device or socket); give another name", ErrRefused, path)
		}
	}
	where := filepath.Join(resolved(dir), filepath.Base(path))
	for _, tree := range g.trees {
		if within(where, tree) {
			return fmt.Errorf("%w: %s is inside the data set %s that this command reads; write the output elsewhere", ErrRefused, path, tree)
		}
	}
	for _, in := range g.inputs {
		same := in.path == target
		if !same && in.info != nil && lerr == nil {
			same = os.SameFile(in.info, lst)
		}
		if !same && in.info != nil && in.info.IsDir() && filepath.Dir(target) == in.path && isRunFile(filepath.Base(target)) {
			same = true
		}
		if same {
			return fmt.Errorf("%w: %s is an input of this command; write the output to another file", ErrRefused, path)
		}
	}
	if IsRunDir(dir) {
		if isRunFile(filepath.Base(path)) {
			return fmt.Errorf("%w: %s belongs to the run in %s (holdctl train writes it); write the output to another file", ErrRefused, path, dir)
		}
		if owner, busy := runlock.Holder(dir); busy {
			return fmt.Errorf("%w: %s is in the run directory %s, which %s is writing now (its lock); wait for it or write elsewhere", ErrRefused, path, dir, owner)
		}
	}
	if lerr == nil && !g.force && lst.Size() > 0 {
		got, err := Sniff(path)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrRefused, path, err)
		}
		if got != kind {
			return fmt.Errorf("%w: %s holds %s, not %s; give another name, or pass --force to replace it", ErrRefused, path, got, kind)
		}
	}
	return nil
}

// Output is one file a command is about to write, named by the flag that gives it.
type Output struct {
	Flag, Path string
	Kind       Kind
}

// CheckAll checks each output (one with an empty path is none) and refuses two outputs that are the
// same file. The errors name the flag: "--FLAG: why" (Check's reason) or "--FLAG PATH: the same file
// as --OTHER; …".
func (g *Guard) CheckAll(outs ...Output) error {
	seen := map[string]string{}
	for _, o := range outs {
		if o.Path == "" {
			continue
		}
		if err := g.Check(o.Path, o.Kind); err != nil {
			return fmt.Errorf("--%s: %s", o.Flag, strings.TrimPrefix(err.Error(), ErrRefused.Error()+": "))
		}
		a := abs(o.Path)
		if prev, dup := seen[a]; dup {
			return fmt.Errorf("--%s %s: the same file as --%s; give each output its own file", o.Flag, o.Path, prev)
		}
		seen[a] = o.Flag
	}
	return nil
}

func isRunFile(base string) bool {
	for _, f := range RunFiles {
		if base == f {
			return true
		}
	}
	return false
}

// IsRunDir reports whether dir is a run directory of holdctl train: it has
// the lock file, or a checkpoint next to a config.
func IsRunDir(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, runlock.Name)); err == nil {
		return true
	}
	_, e1 := os.Stat(filepath.Join(dir, "ckpt.safetensors"))
	_, e2 := os.Stat(filepath.Join(dir, "config.yaml"))
	return e1 == nil && e2 == nil
}

// Sniff tells the kind of a regular file from its first bytes.
func Sniff(path string) (Kind, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	return SniffBytes(head[:n]), nil
}

// SniffBytes tells a kind from a file's first bytes (up to 512).
func SniffBytes(b []byte) Kind {
	switch {
	case bytes.HasPrefix(b, []byte("\x93NUMPY")):
		return NPY
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return PNG
	case bytes.HasPrefix(b, []byte("PK\x03\x04")) || bytes.HasPrefix(b, []byte("PK\x05\x06")):
		if bytes.Contains(b, []byte("data.pkl")) {
			return Pickle
		}
		return NPZ
	case len(b) >= 2 && b[0] == 0x80 && b[1] <= 5:
		return Pickle
	case len(b) >= 9 && b[8] == '{' && le64(b) > 0:
		return Safetensors
	case bytes.HasPrefix(b, []byte("\x1f\x8b")):
		return Profile
	}
	if bytes.IndexByte(b, 0) < 0 && utf8.Valid(trimPartialRune(b)) {
		return Text
	}
	return Binary
}

func le64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

// trimPartialRune drops a rune cut by the 512-byte window: the last rune
// start of the tail when the bytes after it are an incomplete encoding. Any
// other invalid byte stays (dropping up to three bytes whatever they were
// made a short binary file such as "\xff\xfeA" text).
func trimPartialRune(b []byte) []byte {
	for i := 1; i < utf8.UTFMax && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}
