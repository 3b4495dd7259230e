// Package runlock guards a run directory against two processes writing it
// at once: an advisory lock file, DIR/.lock, held with flock(2) on Unix for
// as long as the run lasts and holding the owner's pid and host.
//
// The kernel drops a flock when its process dies, however it dies, so on
// one host a lock is never stuck: a file left with a dead owner's pid and
// this host is a stale lock, taken over (and reported) by the next run. A
// file naming another host is not taken over: flock(2) does not reach
// across hosts on every network file system, so that owner may be alive;
// Options.ForceUnlock (holdctl train --force-unlock) takes it over. The file
// is opened without following symbolic links and must be a regular file.
//
// Release empties the file and leaves it. Undo, for a process refused before
// it used the directory, also removes the file if its Acquire created it, so
// that a refusal leaves the directory as it found it. It removes the file
// while holding its flock; a process that opened the old file meanwhile and
// locks it after the removal would hold a lock nobody else can see, so
// Acquire checks, once it holds a flock, that the path still names the file
// it locked, and starts again if not.
package runlock

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
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
	// Created reports that Acquire created the lock file (the directory had
	// none), which Undo then removes.
	Created bool
}

// Options change how Acquire treats a lock left behind.
type Options struct {
	// ForceUnlock takes over a free lock that names another host.
	ForceUnlock bool
}

// ErrOtherHost is wrapped by the error of Acquire when a free lock names
// another host (its owner may still be alive there).
var ErrOtherHost = errors.New("the lock names another host")

// Acquire takes the lock of dir (which must exist) without waiting. When
// another process holds it, the error wraps ErrLocked and names the owner.
func Acquire(dir string) (*Lock, error) { return AcquireWith(dir, Options{}) }

// AcquireWith is Acquire with options.
func AcquireWith(dir string, opt Options) (*Lock, error) {
	path := filepath.Join(dir, Name)
	for range maxAttempts {
		f, created, err := openOrCreate(path)
		if err != nil {
			return nil, err
		}
		l, err := lockOpened(dir, path, f, opt)
		if errors.Is(err, errReplaced) {
			continue // removed by an Undo between the open and the flock: lock the file now there
		}
		if l != nil {
			l.Created = created
		}
		return l, err
	}
	return nil, fmt.Errorf("lock %s: the lock file was replaced %d times while this process tried to lock it; try again", path, maxAttempts)
}

// maxAttempts bounds AcquireWith's retries when the lock file is removed under it.
const maxAttempts = 100

// errReplaced: the lock file was removed (Undo) after this process opened it.
var errReplaced = errors.New("lock file replaced")

// openOrCreate opens the lock file, creating it if there is none, and
// reports whether it did.
func openOrCreate(path string) (*os.File, bool, error) {
	for range maxAttempts {
		f, err := openLockFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL)
		if err == nil {
			return f, true, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, false, err
		}
		f, err = openLockFile(path, os.O_RDWR)
		if err == nil {
			return f, false, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, false, err
		}
		// Removed between the two opens: create it again.
	}
	return nil, false, fmt.Errorf("lock %s: the lock file kept disappearing; try again", path)
}

// lockOpened takes the flock of the opened lock file f and records this
// process as its owner.
func lockOpened(dir, path string, f *os.File, opt Options) (*Lock, error) {
	if err := tryLock(f); err != nil {
		owner := readOwner(f)
		// The holder writes its owner line just after taking the flock: give it a moment.
		for i := 0; i < 50 && owner == unknownOwner && errors.Is(err, errBusy); i++ {
			time.Sleep(2 * time.Millisecond)
			owner = readOwner(f)
		}
		f.Close()
		if errors.Is(err, errBusy) {
			return nil, fmt.Errorf("%w: %s is locked by %s (%s); wait for it to finish or choose another directory",
				ErrLocked, dir, owner, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !namesFile(path, f) {
		unlock(f)
		f.Close()
		return nil, errReplaced
	}
	l := &Lock{f: f, path: path, Stale: readOwner(f)}
	if l.Stale == unknownOwner {
		l.Stale = ""
	}
	host, _ := os.Hostname()
	if l.Stale != "" && !opt.ForceUnlock && ownerHost(l.Stale) != host {
		f.Close()
		return nil, fmt.Errorf("%s is locked by %s (%s), and this is host %s: %w, whose process cannot be known to be dead; "+
			"if it is, pass --force-unlock to take the lock over", dir, l.Stale, path, host, ErrOtherHost)
	}
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

// openLockFile opens the lock file without following a symbolic link and
// refuses anything but a regular file (a FIFO would block, a link would let
// the lock truncate its target).
func openLockFile(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|noFollow|nonBlock, 0o644)
	if err != nil {
		if isLoop(err) {
			return nil, fmt.Errorf("lock %s: it is a symbolic link; remove it (a run's lock file is a regular file)", path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("lock %s: not a regular file (%v); remove it", path, st.Mode().Type())
	}
	return f, nil
}

// ownerHost is the host of an owner line "pid N on host H".
func ownerHost(owner string) string {
	_, host, ok := strings.Cut(owner, " on host ")
	if !ok {
		return ""
	}
	return host
}

// Holder reports whether a process holds the lock of dir now, and which.
// It creates nothing: a directory without a lock file is free.
func Holder(dir string) (string, bool) {
	path := filepath.Join(dir, Name)
	f, err := openLockFile(path, os.O_RDONLY)
	if err != nil {
		if _, serr := os.Lstat(path); serr != nil {
			return "", false
		}
		return "an unreadable lock file", true
	}
	defer f.Close()
	if err := tryLock(f); err != nil {
		return readOwner(f), true
	}
	unlock(f)
	return "", false
}

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

// namesFile reports whether path still names the open file f.
func namesFile(path string, f *os.File) bool {
	held, err := f.Stat()
	if err != nil {
		return false
	}
	now, err := os.Lstat(path)
	return err == nil && os.SameFile(held, now)
}

// Undo drops the lock of a process that was refused before it used the
// directory: it removes the lock file if Acquire created it (while the lock
// is still held, see the package comment), else empties it as Release does.
// A file already gone (the directory removed with it) is no error.
func (l *Lock) Undo() error {
	if l == nil || l.f == nil {
		return nil
	}
	if !l.Created || !namesFile(l.path, l.f) {
		return l.Release()
	}
	err := os.Remove(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
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
