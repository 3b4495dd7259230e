package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestCLISignalsLeaveNothing: SIGINT, SIGTERM, SIGHUP and SIGQUIT delivered while sample streams its
// .npy (a temporary file beside the output) remove the temporary, write no output, and exit with
// 128 + the signal's number; a train stopped by SIGHUP writes its checkpoint first and exits 130.
func TestCLISignalsLeaveNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts long sampling runs")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		dir := t.TempDir()
		out := filepath.Join(dir, "s.npy")
		cmd := exec.Command(holdctlBin, "sample", "--oracle", "--n", "50000000", "--nfe", "20", "--sampler", "em",
			"--threads", "1", "--out", out)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitFor(t, func() bool { return len(temporaries(t, dir)) > 0 }, "sample's temporary file")
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		err := waitExit(t, cmd)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 128+int(sig) {
			t.Errorf("%v: %v, want exit status %d; stderr:\n%s", sig, err, 128+int(sig), stderr.String())
		}
		if left := temporaries(t, dir); len(left) > 0 {
			t.Errorf("%v left %v", sig, left)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: the output %s was written", sig, out)
		}
		if sig != syscall.SIGQUIT && !strings.Contains(stderr.String(), "nothing was left half-written") {
			t.Errorf("%v: stderr does not say so:\n%s", sig, stderr.String())
		}
	}

	run := filepath.Join(t.TempDir(), "run")
	cmd := exec.Command(holdctlBin, "train", "--hidden", "16", "--layers", "2", "--steps", "10000000", "--threads", "1",
		"--ckpt-every", "0", "--out", run)
	var stderr lockedBuffer // read while the process writes it
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "step ") }, "training progress")
	if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	err := waitExit(t, cmd)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("train after SIGHUP: %v, want 130; stderr:\n%s", err, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(run, "ckpt.safetensors")); err != nil {
		t.Errorf("train after SIGHUP wrote no checkpoint: %v", err)
	}
}

// temporaries lists the atomic writes' temporary files in dir.
func temporaries(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			out = append(out, e.Name())
		}
	}
	return out
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 30 s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func waitExit(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the process did not exit within 20 s of the signal")
		return nil
	}
}

// lockedBuffer is a bytes.Buffer safe to read while a process's output is copied into it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
