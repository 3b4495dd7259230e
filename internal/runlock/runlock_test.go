//go:build unix

package runlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
	dead := "pid 4194305 on host elsewhere"
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
