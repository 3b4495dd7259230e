package checkpoint

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// saveOld writes a small checkpoint at path and returns its bytes.
func saveOld(t *testing.T, path string) []byte {
	t.Helper()
	if err := Save(path, []Tensor{{Name: "old", Shape: []int{2}, Data: []float32{1, 2}}}, nil); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkIntact fails unless path still holds old and dir holds nothing but
// the files named in keep (no temporary files left behind).
func checkIntact(t *testing.T, path string, old []byte, keep ...string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(got, old) {
		t.Errorf("%s was changed by a failed Save (err %v)", path, err)
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(path) && !contains(keep, e.Name()) {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var newTensors = []Tensor{{Name: "new", Shape: []int{3}, Data: []float32{3, 4, 5}}}

func TestSaveReplacesAtomically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	saveOld(t, path)
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Save(path, newTensors, nil); err != nil {
		t.Fatal(err)
	}
	f, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Names(); len(got) != 1 || got[0] != "new" {
		t.Errorf("after overwrite Names() = %q", got)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want the old file's 0600 kept", st.Mode().Perm())
	}
	checkIntact(t, path, mustRead(t, path))
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// A write that fails half-way (disk full, I/O error) leaves the old file.
func TestFailedWriteKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	old := saveOld(t, path)
	diskFull := errors.New("no space left on device")
	err := writeAtomic(path, func(w io.Writer) error {
		w.Write([]byte("partial bytes of a new checkpoint"))
		return diskFull
	})
	if !errors.Is(err, diskFull) {
		t.Errorf("err = %v, want the write error", err)
	}
	checkIntact(t, path, old)
}

// Invalid input is refused before anything touches the disk.
func TestInvalidSaveKeepsOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt")
	old := saveOld(t, path)
	err := Save(path, []Tensor{{Name: "bad", Shape: []int{4}, Data: []float32{1}}}, nil)
	if !errors.Is(err, ErrShape) {
		t.Errorf("err = %v, want ErrShape", err)
	}
	checkIntact(t, path, old)
}

// The rename itself fails (the target is a directory): the temporary
// file is removed and the directory is untouched.
func TestFailedRenameCleansUp(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "ckpt")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	err := Save(target, newTensors, nil)
	if err == nil {
		t.Fatal("Save over a directory succeeded")
	}
	if st, statErr := os.Stat(target); statErr != nil || !st.IsDir() {
		t.Errorf("target directory damaged: %v", statErr)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the target: %v", len(entries), entries)
	}
}

func TestSaveUnwritableDirectory(t *testing.T) {
	// A directory that does not exist, and a "directory" that is a file.
	dir := t.TempDir()
	file := filepath.Join(dir, "plain")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "no", "such", "dir", "ckpt"), filepath.Join(file, "ckpt")} {
		if err := Save(path, newTensors, nil); err == nil {
			t.Errorf("Save(%s) succeeded", path)
		}
	}

	// A read-only directory holding an old checkpoint. Root ignores
	// permissions, so this part needs an ordinary user.
	if os.Geteuid() == 0 {
		t.Log("running as root: read-only directory case not checked")
		return
	}
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ro, "ckpt")
	old := saveOld(t, path)
	if err := os.Chmod(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(ro, 0o755) })
	if err := Save(path, newTensors, nil); err == nil {
		t.Error("Save into a read-only directory succeeded")
	}
	checkIntact(t, path, old)
}
