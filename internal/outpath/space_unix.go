//go:build unix

package outpath

import (
	"fmt"
	"path/filepath"
	"syscall"
)

// CheckSpace refuses a write of about size bytes into path's directory when
// the file system has less free space (for the caller), before anything is
// written.
func CheckSpace(path string, size uint64) error {
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return nil // unknown: the write itself reports a full disk
	}
	free := uint64(st.Bavail) * uint64(st.Bsize)
	if size > free {
		return fmt.Errorf("%w: %s needs about %d bytes but its file system has %d free; write less (a smaller --n) or elsewhere", ErrRefused, path, size, free)
	}
	return nil
}
