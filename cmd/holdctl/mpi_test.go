//go:build mpi

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"holdgo/checkpoint"
)

// Data-parallel training under mpirun (issue 15), run by make test-mpi: holdctl built with
// -tags mpi, launched by `mpirun --oversubscribe --allow-run-as-root -np N` on this machine.
// Each N-rank run is compared with the one-process run of the same global batch and seed.
//
// What limits the agreement: the ranks draw exactly the same data, times and noise as the one
// process (keyed by the global sample index), and each sample's forward and backward pass is the
// same arithmetic, so only the order of the float32 gradient summation differs: a rank sums the
// weight gradients over its B/N samples (inside the GEMMs), the all-reduce then adds the N
// partial sums, where one process sums all B at once. That is ≈1e-7 relative per gradient
// element, the logged loss is rounded to float32 by the all-reduce (≈6e-8), and Adam's update
// m/(√v + ε), sensitive where gradients are near zero, carries these differences into the
// weights over the steps.
const (
	mpiLossRelTol = 1e-4
	mpiParamNMSE  = 1e-6
)

// mpiBinary builds holdctl with the MPI communicator once per test binary.
func mpiBinary(t *testing.T) string {
	t.Helper()
	if mpiBin != "" {
		return mpiBin
	}
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Fatalf("mpirun not found (Debian: apt-get install openmpi-bin libopenmpi-dev): %v", err)
	}
	dir, err := os.MkdirTemp("", "holdctl-mpi")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "holdctl")
	out, err := exec.Command("go", "build", "-tags", mpiBuildTags, "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -tags %q: %v\n%s", mpiBuildTags, err, out)
	}
	mpiBin = bin
	return bin
}

var mpiBin string

// mpiRun runs holdctl train with args on np ranks (np 0: without mpirun) and returns its
// combined output. A run that hangs (ranks that disagree on the number of collective calls wait
// for each other forever) fails after mpiTimeout.
func mpiRun(t *testing.T, np int, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), mpiTimeout)
	defer cancel()
	cmd := mpiCommand(t, ctx, np, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("train on %d ranks %v hung for %v:\n%s", np, args, mpiTimeout, out.String())
	}
	return out.String(), err
}

const mpiTimeout = 5 * time.Minute

// mpiCommand is holdctl train with args on np ranks (np 0: without mpirun). When ctx ends,
// mpirun gets SIGTERM (it ends its ranks), then SIGKILL 10 s later.
func mpiCommand(t *testing.T, ctx context.Context, np int, args ...string) *exec.Cmd {
	bin := mpiBinary(t)
	args = append([]string{"train", "--threads", "1", "--log-every", "1"}, args...)
	var cmd *exec.Cmd
	if np == 0 {
		cmd = exec.CommandContext(ctx, bin, args...)
	} else {
		cmd = exec.CommandContext(ctx, "mpirun", append([]string{"--oversubscribe", "--allow-run-as-root", "-np", strconv.Itoa(np), bin}, args...)...)
	}
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

func mustTrain(t *testing.T, np int, args ...string) string {
	t.Helper()
	out, err := mpiRun(t, np, args...)
	if err != nil {
		t.Fatalf("train on %d ranks %v: %v\n%s", np, args, err, out)
	}
	return out
}

// logLosses returns the loss column of a run's log.csv, by step.
func logLosses(t *testing.T, dir string) map[int]float64 {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	out := map[int]float64{}
	for _, r := range rows[1:] {
		step, err1 := strconv.Atoi(r[0])
		loss, err2 := strconv.ParseFloat(r[1], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: bad row %v", dir, r)
		}
		out[step] = loss
	}
	return out
}

// compareRuns checks run against the one-process reference ref: the same logged steps, every
// loss within mpiLossRelTol, the weights and EMA weights within mpiParamNMSE. It returns the worst
// loss difference and the weights' NMSE.
func compareRuns(t *testing.T, what, run, ref string) (float64, float64) {
	t.Helper()
	a, b := logLosses(t, run), logLosses(t, ref)
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%s: %d logged steps, the reference %d", what, len(a), len(b))
	}
	worst := 0.0
	for step, want := range b {
		got, ok := a[step]
		if !ok {
			t.Fatalf("%s: step %d not logged", what, step)
		}
		worst = max(worst, math.Abs(got-want)/math.Abs(want))
	}
	weights, ema := ckptNMSE(t, run, ref, "")
	if !(worst <= mpiLossRelTol) || !(weights <= mpiParamNMSE) || !(ema <= mpiParamNMSE) {
		t.Errorf("%s: losses differ by up to %.3g relative (limit %g), weights NMSE %.3g, EMA NMSE %.3g (limit %g)",
			what, worst, mpiLossRelTol, weights, ema, mpiParamNMSE)
	}
	t.Logf("%s: %d losses, worst relative difference %.3g; final weights NMSE %.3g, EMA weights %.3g", what, len(a), worst, weights, ema)
	return worst, weights
}

// ckptNMSE returns the NMSE of the weights and of the EMA weights of two runs' checkpoints.
func ckptNMSE(t *testing.T, run, ref, _ string) (weights, ema float64) {
	t.Helper()
	fa, err := checkpoint.Load(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	fb, err := checkpoint.Load(filepath.Join(ref, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	var num, den [2]float64
	for _, name := range fb.Names() {
		k := 0
		switch {
		case strings.HasPrefix(name, "adam_"):
			continue
		case strings.HasPrefix(name, "ema."):
			k = 1
		}
		y, err := fb.Float32(name)
		if err != nil {
			continue // not a float32 tensor
		}
		x, err := fa.Float32(name)
		if err != nil || len(x) != len(y) {
			t.Fatalf("%s: tensor %s: %v (%d values, reference %d)", run, name, err, len(x), len(y))
		}
		for i := range x {
			d := float64(x[i]) - float64(y[i])
			num[k] += d * d
			den[k] += float64(y[i]) * float64(y[i])
		}
	}
	return num[0] / den[0], num[1] / den[1]
}

func toyArgs(out string, steps int, extra ...string) []string {
	return append([]string{"--data", "swissroll", "--hidden", "64", "--layers", "3", "--batch", "96", "--steps", strconv.Itoa(steps),
		"--seed", "7", "--out", out}, extra...)
}

// TestMPIToyMatchesOneProcess: the toy MLP, global batch 96, 50 steps, on 2 and 3 ranks against
// one process; and 25 steps on 2 ranks resumed for 25 on 3 ranks against the 50 steps of one.
func TestMPIToyMatchesOneProcess(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "one")
	mustTrain(t, 0, toyArgs(ref, 50)...)
	for _, np := range []int{2, 3} {
		run := filepath.Join(dir, fmt.Sprintf("np%d", np))
		out := mustTrain(t, np, toyArgs(run, 50)...)
		if want := fmt.Sprintf("%d ranks (batch %d each)", np, 96/np); !strings.Contains(out, want) {
			t.Errorf("%d ranks: the first progress line does not say %q:\n%s", np, want, out)
		}
		if strings.Count(out, "done: step 50") != 1 {
			t.Errorf("%d ranks: want one progress report (rank 0's), got:\n%s", np, out)
		}
		yml, err := os.ReadFile(filepath.Join(run, configName))
		if err != nil || !strings.Contains(string(yml), fmt.Sprintf("ranks: %d\n", np)) {
			t.Errorf("%d ranks: config.yaml does not record the ranks (%v):\n%s", np, err, yml)
		}
		compareRuns(t, fmt.Sprintf("toy MLP, %d ranks", np), run, ref)
	}
	resumed := filepath.Join(dir, "resumed")
	mustTrain(t, 2, toyArgs(resumed, 25)...)
	mustTrain(t, 3, "--resume", "--steps", "50", "--out", resumed)
	compareRuns(t, "toy MLP, 25 steps on 2 ranks + 25 resumed on 3", resumed, ref)
}

// TestMPINCSNppTinyMatchesOneProcess: ncsnpp-tiny on 8×8 images with dropout 0.1 (the CIFAR-10
// recipe's), global batch 4, 10 steps, on 2 ranks against one process.
func TestMPINCSNppTinyMatchesOneProcess(t *testing.T) {
	dir := t.TempDir()
	imgs := filepath.Join(dir, "imgs")
	if err := os.Mkdir(imgs, 0o755); err != nil {
		t.Fatal(err)
	}
	writeMPIImages(t, imgs, 32)
	args := func(out string) []string {
		return []string{"--data", "images:" + imgs, "--model", "ncsnpp-tiny", "--steps", "10", "--batch", "4", "--seed", "1",
			"--dropout", "0.1", "--out", out}
	}
	ref := filepath.Join(dir, "one")
	mustTrain(t, 0, args(ref)...)
	run := filepath.Join(dir, "np2")
	mustTrain(t, 2, args(run)...)
	compareRuns(t, "ncsnpp-tiny, 2 ranks", run, ref)
}

// writeMPIImages writes n 8×8 RGB PNGs with smooth, image-dependent content into dir.
func writeMPIImages(t *testing.T, dir string, n int) {
	t.Helper()
	for k := range n {
		img := image.NewRGBA(image.Rect(0, 0, 8, 8))
		for y := range 8 {
			for x := range 8 {
				v := func(c int) uint8 { return uint8(128 + 120*math.Sin(float64(x*(k%5+1)+y*(c+1)+k)/3)) }
				img.Set(x, y, color.RGBA{v(0), v(1), v(2), 255})
			}
		}
		var buf bytes.Buffer
		if err := png.Encode(&buf, img); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("img%03d.png", k)), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMPIUsageErrors: a batch that does not split over the ranks is refused by every rank with
// rank 0's message, before anything is written.
func TestMPIUsageErrors(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "odd")
	out, err := mpiRun(t, 3, toyArgs(run, 5, "--batch", "100")...)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(out, "multiple of 3") {
		t.Fatalf("batch 100 on 3 ranks: want exit 2 and a message naming multiples of 3, got %v:\n%s", err, out)
	}
	if strings.Count(out, "multiple of 3") != 1 {
		t.Errorf("want the message once (rank 0's), got:\n%s", out)
	}
	if _, err := os.Stat(run); err == nil {
		t.Errorf("the refused run left %s behind", run)
	}
}

// TestMPINonFinite: a learning rate that blows the weights up stops every rank at the same step
// with rank 0's message; the last good checkpoint stays.
func TestMPINonFinite(t *testing.T) {
	run := filepath.Join(t.TempDir(), "nan")
	out, err := mpiRun(t, 2, toyArgs(run, 40, "--lr", "1e30", "--ckpt-every", "1", "--grad-clip", "0")...)
	var exit *exec.ExitError
	i := strings.Index(out, "last good checkpoint (step ")
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || i < 0 {
		t.Fatalf("overflowing loss on 2 ranks: want exit 1 naming the last good checkpoint, got %v:\n%s", err, out)
	}
	var lastGood int64
	fmt.Sscanf(out[i+len("last good checkpoint (step "):], "%d", &lastGood)
	f, err := checkpoint.Load(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	if step, err := f.Step(); err != nil || step != lastGood || lastGood < 1 {
		t.Errorf("the checkpoint holds step %d (%v), the message names step %d", step, err, lastGood)
	}
	t.Logf("stopped with: %s", strings.TrimSpace(out[strings.Index(out, "holdctl: training stopped"):]))
}

// TestMPITimeLimit: --time-limit is rank 0's decision, broadcast: every rank stops after the same
// step, the job exits 0 with rank 0's checkpoint, and the run resumes from it on another number of
// ranks.
func TestMPITimeLimit(t *testing.T) {
	run := filepath.Join(t.TempDir(), "limited")
	out := mustTrain(t, 3, toyArgs(run, 1_000_000, "--time-limit", "1500ms", "--log-every", "1000")...)
	if strings.Count(out, "time limit reached: step ") != 1 {
		t.Fatalf("want rank 0's one time-limit report, got:\n%s", out)
	}
	f, err := checkpoint.Load(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	step, err := f.Step()
	if err != nil || step < 1 {
		t.Fatalf("checkpoint step %d (%v)", step, err)
	}
	res := mustTrain(t, 2, "--resume", "--steps", strconv.Itoa(int(step)+5), "--out", run)
	if !strings.Contains(res, fmt.Sprintf("done: step %d", step+5)) {
		t.Errorf("resume after the time limit did not reach step %d:\n%s", step+5, res)
	}
	t.Logf("time limit on 3 ranks: stopped at step %d; resumed on 2 ranks to %d", step, step+5)
}

// TestMPIKilledRank: SIGKILL to rank 1 of 3 mid-run ends the job with a non-zero status within
// 30 s; the checkpoint on disk loads and the run resumes (on 2 ranks) from it.
func TestMPIKilledRank(t *testing.T) {
	run := filepath.Join(t.TempDir(), "killed")
	ctx, cancel := context.WithTimeout(context.Background(), mpiTimeout)
	defer cancel()
	cmd := mpiCommand(t, ctx, 3, toyArgs(run, 1_000_000, "--ckpt-every", "20", "--log-every", "1000")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ckpt := filepath.Join(run, ckptName)
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(ckpt); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Signal(syscall.SIGTERM)
			t.Fatalf("no checkpoint after 60 s:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // mid-run, a few checkpoints on
	pid, err := rankPID(cmd.Process.Pid, 1)
	if err != nil {
		cmd.Process.Signal(syscall.SIGTERM)
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Signal(syscall.SIGTERM)
		t.Fatalf("the job still runs 30 s after rank 1 was killed:\n%s", out.String())
	}
	took := time.Since(killed)
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("after SIGKILL of rank 1 mpirun ended with %v, want a non-zero status:\n%s", err, out.String())
	}
	t.Logf("rank 1 killed: mpirun exited with status %d after %.2f s", exit.ExitCode(), took.Seconds())
	f, err := checkpoint.Load(ckpt)
	if err != nil {
		t.Fatalf("the checkpoint left by the killed job does not load: %v", err)
	}
	step, err := f.Step()
	if err != nil || step < 20 || step%20 != 0 {
		t.Fatalf("the checkpoint holds step %d (%v), want a multiple of 20", step, err)
	}
	res := mustTrain(t, 2, "--resume", "--steps", strconv.Itoa(int(step)+10), "--out", run)
	if !strings.Contains(res, fmt.Sprintf("done: step %d", step+10)) {
		t.Errorf("resume after the kill did not reach step %d:\n%s", step+10, res)
	}
	t.Logf("checkpoint of step %d loaded and resumed to step %d on 2 ranks", step, step+10)
}

// rankPID finds the process of MPI rank `rank` among the descendants of mpirun's process.
func rankPID(mpirun, rank int) (int, error) {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil || !descendsFrom(pid, mpirun) {
				continue
			}
			env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
			if err != nil {
				continue
			}
			for _, kv := range strings.Split(string(env), "\x00") {
				if kv == fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", rank) {
					return pid, nil
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return 0, fmt.Errorf("no process of rank %d under mpirun (pid %d)", rank, mpirun)
}

func descendsFrom(pid, ancestor int) bool {
	for depth := 0; depth < 8 && pid > 1; depth++ {
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		s := string(stat)
		fields := strings.Fields(s[strings.LastIndex(s, ")")+1:])
		if len(fields) < 2 {
			return false
		}
		ppid, _ := strconv.Atoi(fields[1])
		if ppid == ancestor {
			return true
		}
		pid = ppid
	}
	return false
}
