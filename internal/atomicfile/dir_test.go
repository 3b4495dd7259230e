package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}

func fillWith(files map[string]string) func(string) error {
	return func(dir string) error {
		for name, content := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestWriteDir: a new directory appears whole; a replaced one holds exactly the new files (none of
// the old left beside them); a failing fill leaves the old directory as it was; an interrupted fill's
// temporary directory is removed by RemoveInflight; nothing but the target is left in the parent.
func TestWriteDir(t *testing.T) {
	parent := t.TempDir()
	path := filepath.Join(parent, "export")
	if err := WriteDir(path, fillWith(map[string]string{"a": "1", "b": "2"})); err != nil {
		t.Fatal(err)
	}
	if got := readDir(t, path); len(got) != 2 || got["a"] != "1" || got["b"] != "2" {
		t.Fatalf("new directory: %v", got)
	}
	if err := WriteDir(path, fillWith(map[string]string{"b": "3", "c": "4"})); err != nil {
		t.Fatal(err)
	}
	if got := readDir(t, path); len(got) != 2 || got["b"] != "3" || got["c"] != "4" {
		t.Fatalf("replaced directory: %v, want exactly b and c", got)
	}
	boom := errors.New("boom")
	err := WriteDir(path, func(dir string) error {
		if err := fillWith(map[string]string{"b": "half"})(dir); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("failing fill: %v", err)
	}
	if got := readDir(t, path); len(got) != 2 || got["b"] != "3" {
		t.Fatalf("a failed replacement changed the directory: %v", got)
	}
	// An interruption: the signal handler's RemoveInflight runs while fill is under way.
	var seen string
	err = WriteDir(path, func(dir string) error {
		seen = dir
		if err := fillWith(map[string]string{"x": "y"})(dir); err != nil {
			return err
		}
		RemoveInflight()
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("RemoveInflight left the temporary directory %s", dir)
		}
		return boom
	})
	if !errors.Is(err, boom) || !strings.Contains(filepath.Base(seen), ".export.tmp-") {
		t.Fatalf("interrupted fill: %v in %s", err, seen)
	}
	entries, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "export" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("the parent holds %v, want only export", names)
	}
	// A file where the directory should be is refused and kept.
	file := filepath.Join(parent, "file")
	if err := os.WriteFile(file, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(file, fillWith(map[string]string{"a": "1"})); err == nil {
		t.Error("WriteDir replaced a regular file")
	}
	if b, _ := os.ReadFile(file); string(b) != "keep" {
		t.Errorf("the file now holds %q", b)
	}
}
