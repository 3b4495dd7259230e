package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteReplacesOrLeavesUntouched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(path, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want the writer's", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Fatalf("failed write changed the file to %q", b)
	}
	if err := WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Fatalf("got %q mode %v", b, st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), nil); err == nil {
		t.Fatal("write into a missing directory succeeded")
	}
}

// TestRemoveStale: the temporary file of a write killed before its rename
// (made here by the same os.CreateTemp pattern Write uses) is removed;
// the target, other dot files and directories are kept.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "ckpt.safetensors")
	if err := WriteFile(target, []byte("good")); err != nil {
		t.Fatal(err)
	}
	killed, err := os.CreateTemp(dir, ".ckpt.safetensors.tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	killed.Close()
	for _, keep := range []string{".lock", "data.tmp-1", ".notes", ".notes.tmp-1", ".ckpt.safetensors.tmp-draft"} {
		if err := os.WriteFile(filepath.Join(dir, keep), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, ".config.yaml.tmp-7"), 0o755); err != nil {
		t.Fatal(err)
	}
	removed, err := RemoveStale(dir, "ckpt.safetensors", "config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != filepath.Base(killed.Name()) {
		t.Fatalf("removed %v, want [%s]", removed, filepath.Base(killed.Name()))
	}
	left, err := os.ReadDir(dir)
	if err != nil || len(left) != 7 {
		t.Fatalf("left %v (%v), want the target, the user's files and the directory", left, err)
	}
}
