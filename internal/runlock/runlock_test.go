//go:build unix

package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestSecondAcquireNamesTheOwner(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	owner := fmt.Sprintf("pid %d on host %s", os.Getpid(), host)
	// flock locks belong to open file descriptions: a second open in this
	// process conflicts as another process's would.
	_, err = Acquire(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), owner) {
		t.Fatalf("second Acquire: %v, want ErrLocked naming %q", err, owner)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, Name))
	if err != nil || len(b) != 0 {
		t.Fatalf("after Release the lock file holds %q (%v), want it empty", b, err)
	}
	l2, err := Acquire(dir)
	if err != nil || l2.Stale != "" {
		t.Fatalf("Acquire after Release: stale %q, %v", l2.Stale, err)
	}
	l2.Release()
}

func TestStaleLockTakenOver(t *testing.T) {
	dir := t.TempDir()
	host, _ := os.Hostname()
	dead := "pid 4194305 on host " + host
	if err := os.WriteFile(filepath.Join(dir, Name), []byte(dead+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	if l.Stale != dead {
		t.Fatalf("Stale = %q, want %q", l.Stale, dead)
	}
	b, _ := os.ReadFile(filepath.Join(dir, Name))
	if !strings.HasPrefix(string(b), fmt.Sprintf("pid %d on host ", os.Getpid())) {
		t.Fatalf("lock file holds %q after the take-over", b)
	}
}

func TestMissingDirectory(t *testing.T) {
	if _, err := Acquire(filepath.Join(t.TempDir(), "missing")); err == nil || errors.Is(err, ErrLocked) {
		t.Fatalf("Acquire of a missing directory: %v", err)
	}
}

// TestOtherHostNeedsForce: a free lock naming another host is not taken over
// (its owner may run there) unless forced, and the file is left as it was.
func TestOtherHostNeedsForce(t *testing.T) {
	dir := t.TempDir()
	other := "pid 7 on host elsewhere"
	path := filepath.Join(dir, Name)
	if err := os.WriteFile(path, []byte(other+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Acquire(dir)
	if !errors.Is(err, ErrOtherHost) || !strings.Contains(err.Error(), "--force-unlock") || !strings.Contains(err.Error(), other) {
		t.Fatalf("Acquire of another host's lock: %v, want ErrOtherHost naming the owner and --force-unlock", err)
	}
	if b, _ := os.ReadFile(path); string(b) != other+"\n" {
		t.Fatalf("refused Acquire changed the lock file to %q", b)
	}
	l, err := AcquireWith(dir, Options{ForceUnlock: true})
	if err != nil || l.Stale != other {
		t.Fatalf("forced Acquire: stale %q, %v", l.Stale, err)
	}
	l.Release()
}

// TestLockFileMustBeRegular: a symbolic link or a FIFO in place of the lock
// file is refused, and the link's target is not touched.
func TestLockFileMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(dir, Name)); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("Acquire through a symbolic link: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Fatalf("the link's target now holds %q", b)
	}
	if _, busy := Holder(dir); !busy {
		t.Fatal("Holder of a symbolic-link lock: free, want busy (unreadable)")
	}
	fifoDir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(fifoDir, Name), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(fifoDir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Acquire of a FIFO: %v", err)
	}
}

func TestHolder(t *testing.T) {
	dir := t.TempDir()
	if _, busy := Holder(dir); busy {
		t.Fatal("a directory without a lock file is busy")
	}
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if owner, busy := Holder(dir); !busy || !strings.Contains(owner, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("Holder while held: %q %v", owner, busy)
	}
	l.Release()
	if _, busy := Holder(dir); busy {
		t.Fatal("busy after Release")
	}
}

// TestUndoRemovesOnlyWhatItCreated: Undo removes a lock file its Acquire created and empties one
// that was there before (as Release does); neither touches a lock another holder has.
func TestUndoRemovesOnlyWhatItCreated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	l, err := Acquire(dir)
	if err != nil || !l.Created {
		t.Fatalf("Acquire of a directory without a lock file: created %v, %v", l != nil && l.Created, err)
	}
	if err := l.Undo(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("after Undo of a created lock the file is there (%v)", err)
	}
	// A lock file that was there is kept, emptied.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	l, err = Acquire(dir)
	if err != nil || l.Created {
		t.Fatalf("Acquire of an existing lock file: created %v, %v", l != nil && l.Created, err)
	}
	if err := l.Undo(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || len(b) != 0 {
		t.Fatalf("after Undo of an existing lock file: %q, %v; want it kept and empty", b, err)
	}
	// A refused Acquire (another holder) creates and removes nothing.
	os.Remove(path)
	holder, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Acquire: %v", err)
	}
	if owner, busy := Holder(dir); !busy || !strings.Contains(owner, fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("after a refused Acquire the holder's lock reads %q, %v", owner, busy)
	}
	holder.Release()
}

// TestAcquireAfterUndoRace: a process that opened the lock file before another's Undo removed it
// must not end up holding the removed file while a third holds the new one. The race is played
// by hand: open the file, let the holder Undo, then lock what was opened.
func TestAcquireAfterUndoRace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, Name)
	first, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	early, err := openLockFile(path, os.O_RDWR) // opened before the Undo
	if err != nil {
		t.Fatal(err)
	}
	defer early.Close()
	if err := first.Undo(); err != nil {
		t.Fatal(err)
	}
	if _, err := lockOpened(dir, path, early, Options{}); !errors.Is(err, errReplaced) {
		t.Fatalf("locking a lock file removed since it was opened: %v, want errReplaced", err)
	}
	// AcquireWith starts again on errReplaced and locks the file the path names now.
	second, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Release()
	if _, err := Acquire(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("a third Acquire while the second holds the new file: %v, want ErrLocked", err)
	}
}
