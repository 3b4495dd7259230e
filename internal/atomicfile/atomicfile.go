// Package atomicfile writes files so that a reader sees either the old file
// or the complete new one, never a torn write: a temporary file in the same
// directory, fsync, rename over the target, fsync of the directory. An
// existing file's permissions are kept; new files get 0644.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// inflight holds the temporary files (and WriteDir's temporary directories)
// of the writes under way, for RemoveInflight (a signal handler's cleanup).
var inflight sync.Map

// RemoveInflight removes the temporary files of every write under way in
// this process. A signal handler calls it before exiting, so an interrupted
// command leaves no temporary file behind.
func RemoveInflight() {
	inflight.Range(func(k, _ any) bool {
		os.RemoveAll(k.(string))
		inflight.Delete(k)
		return true
	})
}

// Write creates path with the bytes write produces, or leaves whatever was
// at path untouched and returns an error naming the failed step.
func Write(path string, write func(io.Writer) error) error {
	mode := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		mode = st.Mode().Perm()
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*") // tempPattern
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	inflight.Store(tmp.Name(), struct{}{})
	renamed := false
	defer func() {
		if !renamed {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		inflight.Delete(tmp.Name())
	}()
	if err := write(tmp); err != nil {
		return fmt.Errorf("write: %w", err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("fsync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	renamed = true
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("fsync directory (the new file is in place but may not survive a crash): %w", err)
	}
	return nil
}

// WriteFile atomically replaces path with data.
func WriteFile(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Copy copies the file src to dst atomically.
func Copy(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := Write(dst, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	}); err != nil {
		return fmt.Errorf("write %s: %w", dst, err)
	}
	return nil
}

// syncDir makes a rename in dir durable. Windows cannot open directories
// for syncing; there the rename is as durable as the OS makes it.
func syncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

// RemoveStale removes the temporary files that writes of the named targets
// (base names in dir) killed before their rename left in dir, and returns
// their names. Only this package's own pattern is touched: "." + a target's
// name + ".tmp-" + the decimal suffix os.CreateTemp gives; a user's
// ".notes.tmp-draft" stays. Call it only while no write into dir can be
// under way (a run directory under its lock).
func RemoveStale(dir string, targets ...string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("find stale temporary files: %w", err)
	}
	var removed []string
	for _, e := range entries {
		if !isTemp(e.Name(), targets) || !e.Type().IsRegular() {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
			return removed, fmt.Errorf("remove stale temporary file: %w", err)
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}

// isTemp reports whether name is a temporary file of Write for a target.
func isTemp(name string, targets []string) bool {
	for _, t := range targets {
		suffix, ok := strings.CutPrefix(name, "."+t+".tmp-")
		if !ok || suffix == "" {
			continue
		}
		if strings.Trim(suffix, "0123456789") == "" {
			return true
		}
	}
	return false
}
