// Package runlock guards a run directory against two processes writing it
// at once: an advisory lock file, DIR/.lock, held with flock(2) on Unix for
// as long as the run lasts and holding the owner's pid and host.
//
// The kernel drops a flock when its process dies, however it dies, so a
// lock is never stuck: a file left with a dead owner's pid and host is a
// stale lock, taken over (and reported) by the next run. The file is never
// removed, only emptied on release: removing it would let a process that
// opened the old file and one that created a new one both hold "the" lock.
package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Name is the lock file inside a run directory.
const Name = ".lock"

// ErrLocked is wrapped by the error of Acquire when another process holds
// the lock.
var ErrLocked = errors.New("run directory is in use")

// Lock is a held run-directory lock.
type Lock struct {
	f    *os.File
	path string
	// Stale is the owner ("pid N on host H") of a lock that was left
	// behind by a process that no longer holds it, and was taken over; ""
	// when the lock file was free.
	Stale string
}

// Acquire takes the lock of dir (which must exist) without waiting. When
// another process holds it, the error wraps ErrLocked and names the owner.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, Name)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		owner := readOwner(f)
		f.Close()
		if errors.Is(err, errBusy) {
			return nil, fmt.Errorf("%w: %s is locked by %s (%s); wait for it to finish or choose another directory",
				ErrLocked, dir, owner, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	l := &Lock{f: f, path: path, Stale: readOwner(f)}
	if l.Stale == unknownOwner {
		l.Stale = ""
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("pid %d on host %s\n", os.Getpid(), host)
	if err := f.Truncate(0); err != nil {
		l.Release()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if _, err := f.WriteAt([]byte(owner), 0); err != nil {
		l.Release()
		return nil, fmt.Errorf("lock %s: write owner: %w", path, err)
	}
	return l, nil
}

const unknownOwner = "another process"

// readOwner returns the owner recorded in the lock file.
func readOwner(f *os.File) string {
	b := make([]byte, 256)
	n, _ := f.ReadAt(b, 0)
	s := strings.TrimSpace(string(b[:n]))
	if s == "" || !strings.HasPrefix(s, "pid ") {
		return unknownOwner
	}
	return s
}

// Release empties the lock file and drops the lock.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Truncate(0)
	if cerr := l.f.Close(); err == nil {
		err = cerr // closing the last descriptor drops the flock
	}
	l.f = nil
	return err
}
