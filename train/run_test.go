package train

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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

// closeCounter counts the reductions started on a device engine and its Close calls.
type closeCounter struct {
	dist.DeviceComm
	started, closed *atomic.Int32
}

func (c closeCounter) StartAllreduce(b dist.Buffer, e dist.Elem) error {
	c.started.Add(1)
	return c.DeviceComm.StartAllreduce(b, e)
}

func (c closeCounter) Close() error { c.closed.Add(1); return c.DeviceComm.Close() }

// TestRunDeviceComm: RunOptions.DeviceComm gives each rank of a 2-rank run its engine (the
// in-process one here, cuda.OpenNCCL under --dist nccl): the losses equal those of the host
// all-reduce, rank 0 says which engine once, every engine is closed; an engine that cannot be made
// is an input error naming --dist.
func TestRunDeviceComm(t *testing.T) {
	losses := func(dc func(tensor.Device, dist.Communicator, RunConfig) (dist.DeviceComm, string, error), out io.Writer) []float64 {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "run")
		err := LocalRanks(2, "test", func(comm dist.Communicator) error {
			opt := tinyRun(dir, 6, false)
			opt.LogEvery, opt.DeviceComm, opt.Out = 1, dc, out
			return Run(context.Background(), comm, opt)
		})
		if err != nil {
			t.Fatal(err)
		}
		_, loss, err := ReadLossLog(filepath.Join(dir, LogFile))
		if err != nil {
			t.Fatal(err)
		}
		return loss
	}
	want := losses(nil, io.Discard)
	engines, err := dist.NewLocalDevice(2)
	if err != nil {
		t.Fatal(err)
	}
	var started, closed atomic.Int32
	var out strings.Builder
	got := losses(func(dev tensor.Device, comm dist.Communicator, _ RunConfig) (dist.DeviceComm, string, error) {
		return closeCounter{engines[comm.Rank()], &started, &closed}, "engine: in-process", nil
	}, &out)
	if started.Load() < 2*6*2 { // per rank and step: a bucket at least, and the loss
		t.Errorf("%d reductions started on the device engines in 6 steps of 2 ranks", started.Load())
	}
	if len(got) != len(want) || len(got) != 6 {
		t.Fatalf("%d losses with the device engine, %d without (want 6)", len(got), len(want))
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= 2.5e-6*math.Abs(want[i])) {
			t.Errorf("step %d: loss %v with the device engine, %v with the host all-reduce", i+1, got[i], want[i])
		}
	}
	if n := strings.Count(out.String(), "engine: in-process"); n != 1 {
		t.Errorf("the engine's line printed %d times, want once (rank 0):\n%s", n, out.String())
	}
	if closed.Load() != 2 {
		t.Errorf("%d engines closed, want 2", closed.Load())
	}
	err = Run(context.Background(), dist.Single{}, func() RunOptions {
		o := tinyRun(filepath.Join(t.TempDir(), "run"), 2, false)
		o.DeviceComm = func(tensor.Device, dist.Communicator, RunConfig) (dist.DeviceComm, string, error) {
			return nil, "", errors.New("no usable NCCL")
		}
		return o
	}())
	if ExitStatus(err) != 2 || !strings.Contains(err.Error(), "--dist") || !strings.Contains(err.Error(), "no usable NCCL") {
		t.Errorf("an engine that cannot be made: %v (status %d)", err, ExitStatus(err))
	}
}
