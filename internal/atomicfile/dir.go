package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// WriteDir creates the directory path, or replaces an existing one, with the files fill writes into
// a temporary directory beside it (".NAME.tmp-…"), so that a reader of path sees the old directory
// or the complete new one, never a mix: every file is fsynced, then the temporary directory takes
// path's place — by an atomic exchange where the OS has one (Linux renameat2 RENAME_EXCHANGE), by a
// rename over a missing or empty path, or else (a replaced directory on another OS) by two renames
// with a moment in which path is absent. The old content is removed afterwards. A signal handler's
// RemoveInflight removes a temporary directory still being filled.
func WriteDir(path string, fill func(dir string) error) error {
	parent := filepath.Dir(path)
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary directory: %w", err)
	}
	inflight.Store(tmp, struct{}{})
	placed := false
	defer func() {
		if !placed {
			os.RemoveAll(tmp)
		}
		inflight.Delete(tmp)
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	if err := fill(tmp); err != nil {
		return err
	}
	if err := syncTree(tmp); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	st, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("rename: %w", err)
		}
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s exists and is not a directory", path)
	default:
		if err := exchange(tmp, path); err == nil {
			// tmp now holds the old content.
			placed = true
			os.RemoveAll(tmp)
			return syncDir(parent)
		}
		if err := os.Rename(tmp, path); err != nil { // replaces an empty directory
			old := tmp + ".old"
			if err := os.Rename(path, old); err != nil {
				return fmt.Errorf("move the old directory aside: %w", err)
			}
			if err := os.Rename(tmp, path); err != nil {
				os.Rename(old, path)
				return fmt.Errorf("rename: %w", err)
			}
			os.RemoveAll(old)
		}
	}
	placed = true
	return syncDir(parent)
}

// syncTree fsyncs every regular file directly in dir, and dir itself.
func syncTree(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return syncDir(dir)
}
