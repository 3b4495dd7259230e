package experiment

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"holdgo/hold"
	"holdgo/internal/outpath"
	"holdgo/internal/parallel"
	"holdgo/sample"
	"holdgo/tensor"
	"holdgo/train"
)

// The demo's sampler draws n 2-D samples of the Swiss-roll oracle, in chunks on two workers of one
// thread (the pool's threads restored), and writes them as a picture and a .npy; the report has the
// distance, the floor and their ratio.
func TestDemoSampleAndScores(t *testing.T) {
	spec := DemoSamplerSpec("lt", 20)
	if spec.Grid != sample.PreferredGrid("lt") || spec.Denoise != sample.HasReadout("lt") || spec.End != hold.DefaultEndTime(hold.KindHOLD) {
		t.Errorf("spec %+v", spec)
	}
	m, _, err := MomentsModel(hold.KindHOLD, "")
	if err != nil {
		t.Fatal(err)
	}
	s, err := spec.Build(m.SDE, m.Score, 2)
	if err != nil {
		t.Fatal(err)
	}
	threads := parallel.Threads()
	q, res, took, err := DemoSample(s, s.Sample, 2, 60, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 120 || res.NFE != 20 || !(took > 0) || s.Workers != 2 || s.MaxBatch != train.DemoSampleChunk || parallel.Threads() != threads {
		t.Errorf("%d values, NFE %d, %v, workers %d, batch %d, threads %d (was %d)", len(q), res.NFE, took, s.Workers, s.MaxBatch, parallel.Threads(), threads)
	}
	dir := t.TempDir()
	png, npy := filepath.Join(dir, "s.png"), filepath.Join(dir, "s.npy")
	if err := WriteDemoSamples(png, npy, q, 60, "title"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{png, npy} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", p, err)
		}
	}
	var sb strings.Builder
	(&DemoScores{SW: sample.Stat{Mean: 0.02, SE: 0.001}, Floor: sample.Stat{Mean: 0.01, SE: 0.001}}).WriteText(&sb, 59, 60)
	if lines := strings.Split(strings.TrimSpace(sb.String()), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "59 samples") || !strings.HasSuffix(lines[2], "(ratio 2.00)") {
		t.Errorf("report:\n%s", sb.String())
	}
}

// refusingDevice is a device that allocates nothing: the trainer cannot move to it.
type refusingDevice struct{ tensor.Device }

func (refusingDevice) Name() string                     { return "refusing" }
func (refusingDevice) Alloc(int) (tensor.Buffer, error) { return nil, errors.New("no memory") }

// TrainDemo trains a few steps on two local ranks on the CPU, writes the run's log and checkpoint and
// returns the trained model; a device the trainer cannot move to reaches Fix as a DeviceError, on one
// rank.
func TestTrainDemo(t *testing.T) {
	if DemoRanksOn(tensor.CPU) != train.DemoRanks || DemoRanksOn(tensor.Reference) != train.DemoRanks || DemoRanksOn(refusingDevice{}) != 1 {
		t.Errorf("ranks %d on the CPU, %d on the reference, %d on another device", DemoRanksOn(tensor.CPU), DemoRanksOn(tensor.Reference), DemoRanksOn(refusingDevice{}))
	}
	dir, lock, err := train.FreshRunDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	var (
		mu     sync.Mutex
		hinted []int
	)
	td := DemoTraining{Config: train.DemoConfig(3, 1, train.TimesMixed, train.DemoLR, 4, 2, 0.02), Device: tensor.CPU, Prog: "test",
		Session: train.Session{Dir: dir, Out: io.Discard},
		ResumeHint: func(ranks int) string { // called by every rank, concurrently
			mu.Lock()
			defer mu.Unlock()
			hinted = append(hinted, ranks)
			return ""
		},
		Fix: func(err error) error { return err }}
	m, err := TrainDemo(context.Background(), td)
	if err != nil {
		t.Fatal(err)
	}
	if m.SDE.Blocks() != 3 || m.Source.Dimension() != 2 || len(hinted) != train.DemoRanks || hinted[0] != train.DemoRanks {
		t.Errorf("model of %d blocks on %d-D data; hints for %v ranks", m.SDE.Blocks(), m.Source.Dimension(), hinted)
	}
	if steps, _, err := train.ReadLossLog(filepath.Join(dir, train.LogFile)); err != nil || len(steps) == 0 {
		t.Errorf("log: %d rows, %v", len(steps), err)
	}
	var de *DeviceError
	td.Device = refusingDevice{tensor.Reference}
	td.Fix = func(err error) error {
		if !errors.As(err, &de) {
			t.Errorf("Fix(%v), want a DeviceError", err)
		}
		return err
	}
	if _, err := TrainDemo(context.Background(), td); !errors.As(err, &de) {
		t.Errorf("reference device: %v", err)
	}
}

// DemoDir makes the directory and a fresh run-N in it, and refuses a file, a run directory and
// samples the guard refuses.
func TestDemoDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "out")
	png, npy, runDir, lock, err := DemoDir(dir, outpath.New(false))
	if err != nil {
		t.Fatal(err)
	}
	lock.Release()
	if png != filepath.Join(dir, "samples.png") || npy != filepath.Join(dir, "samples.npy") || runDir != filepath.Join(dir, "run-1") {
		t.Errorf("%s, %s, %s", png, npy, runDir)
	}
	if _, _, again, lock, err := DemoDir(dir, outpath.New(false)); err != nil || again != filepath.Join(dir, "run-2") {
		t.Errorf("second run: %s, %v", again, err)
	} else {
		lock.Release()
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := DemoDir(file, outpath.New(false)); err == nil || !strings.Contains(err.Error(), "is a file") {
		t.Errorf("a file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(runDir, train.CheckpointFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, err := DemoDir(runDir, outpath.New(false)); err == nil || !strings.Contains(err.Error(), "run directory") {
		t.Errorf("a run directory: %v", err)
	}
	g := outpath.New(false)
	g.Input(png)
	if _, _, _, _, err := DemoDir(dir, g); !errors.Is(err, outpath.ErrRefused) {
		t.Errorf("samples.png an input: %v", err)
	}
}
