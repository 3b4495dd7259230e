package train

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/dist"
	"holdgo/tensor"
)

// tinyRun is a run of a small MLP on the 1-D mixture in dir.
func tinyRun(dir string, steps int, resume bool) RunOptions {
	return RunOptions{Dir: dir, Resume: resume, LogEvery: 2, Out: io.Discard, DeviceName: "cpu",
		OpenDevice: func() (tensor.Device, error) { return tensor.CPU, nil },
		Configure: func(base RunConfig) (RunConfig, error) {
			if resume {
				base.Steps = steps
				return base, nil
			}
			base.Hidden, base.Layers, base.Batch, base.Steps, base.CkptEvery = 8, 2, 16, steps, 0
			return base, nil
		}}
}

// TestRunLifecycle: a run writes its directory and resumes to more steps with the log continued; a
// cancelled context stops it with the checkpoint written (ExitError 130); a second run into the
// same directory, or a resume that changes a stored key, is an input error (status 2).
func TestRunLifecycle(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	if err := Run(context.Background(), dist.Single{}, tinyRun(dir, 4, false)); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{CheckpointFile, ConfigFile, LogFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("run directory lacks %s: %v", f, err)
		}
	}
	err := Run(context.Background(), dist.Single{}, tinyRun(dir, 4, false))
	if ExitStatus(err) != 2 || !strings.Contains(err.Error(), "already holds a run") {
		t.Errorf("second run into the same directory: %v (status %d)", err, ExitStatus(err))
	}
	if err := Run(context.Background(), dist.Single{}, tinyRun(dir, 6, true)); err != nil {
		t.Fatalf("resume: %v", err)
	}
	steps, _, err := ReadLossLog(filepath.Join(dir, LogFile))
	if err != nil || len(steps) != 3 || steps[2] != 6 {
		t.Errorf("log after the resume: steps %v (%v), want 2, 4, 6", steps, err)
	}
	bad := tinyRun(dir, 8, true)
	bad.Configure = func(base RunConfig) (RunConfig, error) { base.Steps, base.Hidden = 8, 32; return base, nil }
	if err := Run(context.Background(), dist.Single{}, bad); ExitStatus(err) != 2 || !strings.Contains(err.Error(), "contradict the stored run") {
		t.Errorf("resume with another width: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = Run(ctx, dist.Single{}, tinyRun(dir, 8, true))
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Status != 130 || !strings.Contains(err.Error(), "checkpoint of step 6") {
		t.Errorf("cancelled run: %v", err)
	}
}
