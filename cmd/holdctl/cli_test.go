package main

// End-to-end tests of the holdctl binary: TestMain builds it once (with this test binary's build
// tags), each test runs it on tiny settings and checks exit statuses, outputs and files.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"holdgo/checkpoint"
	"holdgo/data"
	"holdgo/experiment"
	"holdgo/metrics"
	"holdgo/tensor"
	"holdgo/train"
)

// holdctlBin is the binary under test; buildTags lists the tags it is built with (cli_noasm_test.go
// adds noasm, so the -tags noasm run tests the pure-Go build).
var (
	holdctlBin string
	buildTags  []string
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "holdctl-cli-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	holdctlBin = filepath.Join(dir, "holdctl")
	args := []string{"build", "-o", holdctlBin}
	if len(buildTags) > 0 {
		args = append(args, "-tags", strings.Join(buildTags, ","))
	}
	build := exec.Command("go", append(args, ".")...)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go %s: %v\n%s", strings.Join(args, " "), err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if runsDir != "" {
		os.RemoveAll(runsDir)
	}
	os.Exit(code)
}

// result is one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

// holdctl runs the binary with args (one thread each, five minutes at most: a hang fails the test,
// while a slow run — the noasm build on a loaded 2-core machine takes 3–5 times a quiet run's time —
// does not).
func holdctl(t *testing.T, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, holdctlBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("holdctl %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustRun runs the binary and fails the test unless it exits with status 0.
func mustRun(t *testing.T, args ...string) result {
	t.Helper()
	r := holdctl(t, args...)
	if r.code != 0 {
		t.Fatalf("holdctl %s: %s", strings.Join(args, " "), r)
	}
	return r
}

// tinyTrain is a training run of a few hundred milliseconds.
func tinyTrain(out, sde, dataSpec string, steps int, extra ...string) []string {
	return append([]string{"train", "--data", dataSpec, "--sde", sde, "--hidden", "16", "--layers", "2", "--batch", "64",
		"--steps", fmt.Sprint(steps), "--ckpt-every", "20", "--log-every", "10", "--threads", "1", "--out", out}, extra...)
}

// Shared runs, trained once per test binary: HOLD and CLD on the 1-D mixture, HOLD on the Swiss rolls.
var (
	runsOnce                   sync.Once
	runsErr                    error
	runsDir                    string
	holdRun, cldRun, hold2DRun string
)

func trainedRuns(t *testing.T) (hold1D, cld1D, hold2D string) {
	t.Helper()
	runsOnce.Do(func() {
		dir, err := os.MkdirTemp("", "holdctl-runs-")
		if err != nil {
			runsErr = err
			return
		}
		runsDir = dir
		holdRun, cldRun, hold2DRun = filepath.Join(dir, "hold"), filepath.Join(dir, "cld"), filepath.Join(dir, "hold2d")
		for _, args := range [][]string{
			tinyTrain(holdRun, "hold", "gmm1d", 200),
			tinyTrain(cldRun, "cld", "gmm1d", 100),
			tinyTrain(hold2DRun, "hold", "swissroll", 100),
		} {
			if out, err := exec.Command(holdctlBin, args...).CombinedOutput(); err != nil {
				runsErr = fmt.Errorf("holdctl %s: %v\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	if runsErr != nil {
		t.Fatal(runsErr)
	}
	return holdRun, cldRun, hold2DRun
}

// lossColumns returns the step, loss, lr and grad_norm columns of a log.csv (not the timing column).
func lossColumns(t *testing.T, dir string) []string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(line, ",")
		if len(f) != 5 {
			t.Fatalf("log row %q: want 5 columns", line)
		}
		rows = append(rows, strings.Join(f[:4], ","))
	}
	return rows
}

// TestCLIInterruptAndResume sends SIGINT to a training run after its first progress line (exit 130,
// a loadable checkpoint), resumes it, and compares its log with an uninterrupted run of the same seed.
func TestCLIInterruptAndResume(t *testing.T) {
	dir := t.TempDir()
	const total = 400
	straight, cut := filepath.Join(dir, "straight"), filepath.Join(dir, "cut")
	mustRun(t, tinyTrain(straight, "hold", "gmm1d", total, "--seed", "7", "--log-every", "1")...)

	// The interrupted run aims far beyond total, so that the signal surely lands before the end.
	cmd := exec.Command(holdctlBin, tinyTrain(cut, "hold", "gmm1d", 1000000, "--seed", "7", "--log-every", "1")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if strings.HasPrefix(sc.Text(), "step ") {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
			break
		}
	}
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v, want exit status 130; stderr:\n%s", err, strings.Join(lines, "\n"))
	}
	if !strings.Contains(strings.Join(lines, "\n"), "interrupted: checkpoint of step") {
		t.Errorf("no interruption message in:\n%s", strings.Join(lines, "\n"))
	}
	f, err := checkpoint.Load(filepath.Join(cut, ckptName))
	if err != nil {
		t.Fatalf("checkpoint after SIGINT: %v", err)
	}
	step, err := f.Step()
	if err != nil || step < 1 || step >= total {
		t.Fatalf("checkpoint after SIGINT at step %d (%v), want in [1, %d)", step, err, total)
	}
	if _, err := train.LoadModel(cut, false, ""); err != nil {
		t.Fatalf("checkpoint after SIGINT does not load: %v", err)
	}
	t.Logf("interrupted at step %d", step)

	r := mustRun(t, "train", "--resume", "--out", cut, "--steps", fmt.Sprint(total), "--log-every", "1", "--threads", "1")
	if !strings.Contains(r.stderr, fmt.Sprintf("steps %d→%d", step, total)) {
		t.Errorf("resume message:\n%s", r.stderr)
	}
	want, got := lossColumns(t, straight), lossColumns(t, cut)
	if len(got) != len(want) {
		t.Fatalf("resumed log has %d rows, uninterrupted %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("log row %d: resumed %q, uninterrupted %q", i, got[i], want[i])
		}
	}
	a, _ := os.ReadFile(filepath.Join(straight, ckptName))
	b, _ := os.ReadFile(filepath.Join(cut, ckptName))
	if !bytes.Equal(a, b) {
		t.Error("final checkpoints of the resumed and the uninterrupted run differ")
	}
}

// TestCLITrainNonFinite: NaN in a data file is refused before training; a loss that overflows stops
// training with a clear message and keeps the last good checkpoint.
func TestCLITrainNonFinite(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "nan.npy")
	if err := data.WriteNPY32(bad, []float32{0.1, float32(math.NaN()), 0.3, 0.4}, 4, 1); err != nil {
		t.Fatal(err)
	}
	r := holdctl(t, tinyTrain(filepath.Join(dir, "nan"), "hold", bad, 20)...)
	if r.code != 2 || !strings.Contains(r.stderr, "NaN") {
		t.Errorf("NaN data: want exit 2 and a message naming NaN, got %s", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "nan", ckptName)); err == nil {
		t.Error("NaN data: a checkpoint was written")
	}

	// Good points and a learning rate that blows the weights up after the first update: the loss
	// overflows, the run stops and the checkpoint of the last good step stays as it was.
	pts := filepath.Join(dir, "points.npy")
	good := make([]float32, 64)
	for i := range good {
		good[i] = float32(i%7) / 7
	}
	if err := data.WriteNPY32(pts, good, 64, 1); err != nil {
		t.Fatal(err)
	}
	run := filepath.Join(dir, "run")
	r = holdctl(t, tinyTrain(run, "hold", pts, 40, "--lr", "1e30", "--ckpt-every", "1")...)
	i := strings.Index(r.stderr, "last good checkpoint (step ")
	if r.code != 1 || !strings.Contains(r.stderr, "training stopped") || i < 0 {
		t.Fatalf("overflowing loss: want a failure naming the last good checkpoint, got %s", r)
	}
	var lastGood int64
	fmt.Sscanf(r.stderr[i+len("last good checkpoint (step "):], "%d", &lastGood)
	f, err := checkpoint.Load(filepath.Join(run, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	if step, err := f.Step(); err != nil || step != lastGood || lastGood < 1 {
		t.Errorf("the checkpoint holds step %d (%v), the message names step %d", step, err, lastGood)
	}
}

// readNPYShape reads a .npy file written by holdctl.
func readNPYShape(t *testing.T, path string) (*data.Array, []int) {
	t.Helper()
	a, err := data.ReadNPY(path)
	if err != nil {
		t.Fatal(err)
	}
	return a, a.Shape
}

// pngSize decodes a PNG and returns its size.
func pngSize(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

func TestCLISampleEvalNLL(t *testing.T) {
	hold1D, _, hold2D := trainedRuns(t)
	dir := t.TempDir()
	npy, pic := filepath.Join(dir, "s.npy"), filepath.Join(dir, "s.png")
	r := mustRun(t, "sample", "--ckpt", hold1D, "--n", "300", "--nfe", "30", "--out", npy, "--out", pic, "--threads", "1")
	if !strings.Contains(r.stdout, "300 samples") {
		t.Errorf("sample output: %s", r)
	}
	if _, shape := readNPYShape(t, npy); len(shape) != 2 || shape[0] != 300 || shape[1] != 1 {
		t.Errorf("samples shape %v, want [300 1]", shape)
	}
	if w, h := pngSize(t, pic); w < 100 || h < 100 {
		t.Errorf("picture %d×%d", w, h)
	}
	// 2-D model: scatter plot
	npy2, pic2 := filepath.Join(dir, "s2.npy"), filepath.Join(dir, "s2.png")
	mustRun(t, "sample", "--ckpt", hold2D, "--n", "200", "--nfe", "20", "--out", npy2, "--out", pic2, "--threads", "1")
	if _, shape := readNPYShape(t, npy2); len(shape) != 2 || shape[1] != 2 {
		t.Errorf("2-D samples shape %v", shape)
	}
	pngSize(t, pic2)

	// eval: JSON with the exact W1 and mode weights for the 1-D mixture
	r = mustRun(t, "eval", "--data", "gmm1d", "--n", "400", "--kernel-points", "200", "--json", npy)
	var rep metrics.EvalReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("eval JSON: %v\n%s", err, r.stdout)
	}
	if rep.Points != 300 || rep.Dim != 1 || rep.W1 == nil || len(rep.ModeWeights) != 3 || !(rep.SW2 > 0) || math.IsNaN(rep.MMD2) ||
		!(rep.Energy > -1) || !(rep.Bandwidth > 0) || !(rep.FloorSW2 > 0) {
		t.Errorf("eval report %+v", rep)
	}
	var sum float64
	for _, w := range rep.ModeWeights {
		sum += w
	}
	if !(math.Abs(sum-1) <= 1e-9) {
		t.Errorf("mode weights %v sum to %g", rep.ModeWeights, sum)
	}
	// exact data samples score near the floor; the text report has every distance
	exact := filepath.Join(dir, "exact.npy")
	mix := data.PaperMixture()
	if err := data.WriteNPY32(exact, data.Draw(mix, tensor.NewRNG(3), 2000), 2000, 1); err != nil {
		t.Fatal(err)
	}
	r = mustRun(t, "eval", "--ckpt", hold1D, "--n", "2000", "--kernel-points", "300", "--samples", exact)
	for _, want := range []string{"Wasserstein-2 (exact in 1-D)", "MMD²", "energy distance", "W1 to the exact mixture", "mode weights"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("eval text lacks %q:\n%s", want, r.stdout)
		}
	}
	r = mustRun(t, "eval", "--data", "swissroll", "--n", "300", "--kernel-points", "200", npy2)
	if strings.Contains(r.stdout, "W1 to the exact") || !strings.Contains(r.stdout, "sliced Wasserstein-2 (256 projections)") {
		t.Errorf("2-D eval:\n%s", r.stdout)
	}

	// nll: held-out draws (derived seed) and a .npy file; mixture data print the exact −log p too
	r = mustRun(t, "nll", "--ckpt", hold1D, "--n", "40", "--tol", "1e-3", "--threads", "1")
	for _, want := range []string{"nats/dim", "bits/dim", "±", "fresh draws of gmm1d", "exact −log p"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("nll output lacks %q:\n%s", want, r.stdout)
		}
	}
	r = mustRun(t, "nll", "--ckpt", hold1D, "--data", exact, "--n", "30", "--tol", "1e-3", "--estimator", "exact", "--threads", "1")
	if !strings.Contains(r.stdout, "30 points: "+exact) {
		t.Errorf("nll on a file:\n%s", r.stdout)
	}
	r = mustRun(t, "nll", "--ckpt", hold1D, "--data", exact, "--n", "30", "--tol", "1e-3", "--gauge", "aligned", "--threads", "1")
	if !strings.Contains(r.stdout, "probability-flow ODE, aligned gauge") {
		t.Errorf("nll --gauge aligned does not say so:\n%s", r.stdout)
	}
}

func TestCLIPlot(t *testing.T) {
	_, _, hold2D := trainedRuns(t)
	dir := t.TempDir()
	fig1 := filepath.Join(dir, "fig1.png")
	r := mustRun(t, "plot", "flow", "--out", fig1, "--paths", "3", "--tol", "1e-3")
	if !strings.Contains(r.stdout, "oracle") {
		t.Errorf("flow output: %s", r)
	}
	if w, h := pngSize(t, fig1); w != 3*560 || h != 460 {
		t.Errorf("Figure 1 is %d×%d, want three 560×460 panels side by side", w, h)
	}
	fig4 := filepath.Join(dir, "fig4.png")
	mustRun(t, "plot", "blocks", "--out", fig4, "--paths", "3", "--steps", "20")
	if w, _ := pngSize(t, fig4); w != 3*520 {
		t.Errorf("Figure 4 is %d wide, want three panels (q, p, s)", w)
	}
	fig5 := filepath.Join(dir, "fig5.png")
	r = mustRun(t, "plot", "moments", "--out", fig5, "--steps", "10", "--n", "50", "--hold", hold2D)
	if !strings.Contains(r.stdout, "CLD: oracle, HOLD: trained") {
		t.Errorf("moments output: %s", r)
	}
	if w, h := pngSize(t, fig5); w != 6*260 || h < 2*260 {
		t.Errorf("Figure 5 is %d×%d, want 2 rows of 6 panels", w, h)
	}
}

func TestCLIExperimentNFE(t *testing.T) {
	hold1D, cld1D, _ := trainedRuns(t)
	dir := t.TempDir()
	args := []string{"experiment", "nfe", "--nfe", "6,12", "--samples", "300", "--floor-reps", "2"}
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	r := mustRun(t, append(args, "--out", a)...)
	for _, want := range []string{"| HOLD | LT |", "| HOLD | EM |", "| CLD | SSCS |", "| VP | EM |", "| VE | PC |",
		"NFE 6: HOLD-LT", "only the oracle table"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("markdown lacks %q:\n%s", want, r.stdout)
		}
	}
	mustRun(t, append(args, "--out", b)...)
	ca, _ := os.ReadFile(a)
	cb, _ := os.ReadFile(b)
	if !bytes.Equal(ca, cb) || !strings.HasPrefix(string(ca), "scores,model,sampler,nfe,nfe_used,steps,metric,value\n") {
		t.Errorf("CSV not reproducible from the seed:\n%s\n---\n%s", ca, cb)
	}
	if n := strings.Count(string(ca), "\noracle,"); n != len(experiment.Table2Rows)*2+2 {
		t.Errorf("CSV has %d oracle rows, want %d:\n%s", n, len(experiment.Table2Rows)*2+2, ca)
	}
	// trained models (HOLD and CLD given; VP and VE rows n/a)
	c := filepath.Join(dir, "c.csv")
	r = mustRun(t, "experiment", "nfe", "--nfe", "6", "--trained-samples", "100", "--floor-reps", "1", "--no-oracle",
		"--hold", hold1D, "--cld", cld1D, "--out", c, "--threads", "1")
	if !strings.Contains(r.stdout, "trained networks") || !strings.Contains(r.stdout, "| VP | EM | n/a |") {
		t.Errorf("trained table:\n%s", r.stdout)
	}
	cc, _ := os.ReadFile(c)
	if !strings.Contains(string(cc), "trained,HOLD,LT,6,6,5,w1_mixture,") || !strings.Contains(string(cc), "trained,CLD,SSCS,6,6,5,") {
		t.Errorf("trained CSV:\n%s", cc)
	}
}

// TestCLIBadInput: every input error exits with status 2, says what is wrong and overwrites nothing.
func TestCLIBadInput(t *testing.T) {
	hold1D, cld1D, hold2D := trainedRuns(t)
	dir := t.TempDir()

	// a truncated checkpoint, and one whose configuration names another network (hidden 32 for 16)
	raw, err := os.ReadFile(filepath.Join(hold1D, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.safetensors")
	if err := os.WriteFile(truncated, raw[:len(raw)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	from, to := []byte(`\"hidden\":16`), []byte(`\"hidden\":32`)
	if !bytes.Contains(raw, from) {
		t.Fatalf("checkpoint metadata lacks %s", from)
	}
	other := filepath.Join(dir, "other.safetensors")
	if err := os.WriteFile(other, bytes.Replace(raw, from, to, 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := train.LoadModel(other, false, ""); err == nil {
		t.Fatal("the edited checkpoint loads")
	}

	// existing outputs that a failing command must leave alone (each of the kind written there, so that
	// the output guard lets the command go on to the error under test)
	keep := map[string][]byte{}
	magic := map[string]string{"out.npy": "\x93NUMPY", "out.png": "\x89PNG\r\n\x1a\n", "out.csv": ""}
	for _, name := range []string{"out.npy", "out.png", "out.csv"} {
		p := filepath.Join(dir, name)
		keep[p] = []byte(magic[name] + "keep " + name)
		if err := os.WriteFile(p, keep[p], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outNPY, outPNG, outCSV := filepath.Join(dir, "out.npy"), filepath.Join(dir, "out.png"), filepath.Join(dir, "out.csv")
	notDir := filepath.Join(dir, "out.npy", "x.npy") // parent is a file
	missing := filepath.Join(dir, "no", "such", "dir")
	samples := filepath.Join(dir, "samples.npy")
	if err := data.WriteNPY32(samples, []float32{0.1, 0.2, 0.3, 0.4}, 4, 1); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string // in the message
	}{
		{"undefined flag", []string{"plot", "flow", "--bogus"}, "flag provided but not defined"},
		{"train unknown sde", tinyTrain(filepath.Join(dir, "r"), "nope", "gmm1d", 5), "unknown SDE"},
		{"train over a run", tinyTrain(hold1D, "hold", "gmm1d", 5), "already holds a run"},
		{"train unwritable dir", tinyTrain(filepath.Join(notDir, "run"), "hold", "gmm1d", 5), "run directory"},
		{"sample unknown sampler", []string{"sample", "--ckpt", hold1D, "--sampler", "nope", "--out", outNPY}, "unknown sampler"},
		{"sample missing ckpt", []string{"sample", "--ckpt", filepath.Join(dir, "nothing"), "--out", outNPY}, "no such file"},
		{"sample truncated ckpt", []string{"sample", "--ckpt", truncated, "--out", outNPY}, truncated},
		{"sample other model", []string{"sample", "--ckpt", other, "--out", outNPY}, "shape"},
		{"sample unwritable", []string{"sample", "--ckpt", hold1D, "--out", notDir}, "not a directory"},
		{"sample missing dir", []string{"sample", "--ckpt", hold1D, "--out", filepath.Join(missing, "s.npy")}, "no such file"},
		{"eval unknown data", []string{"eval", "--data", "nope", samples}, "unknown data set"},
		{"eval dimension", []string{"eval", "--data", "swissroll", samples}, "1-D points"},
		{"eval missing file", []string{"eval", filepath.Join(dir, "none.npy")}, "no such file"},
		{"eval flags after file", []string{"eval", samples, "--data", "gmm1d"}, "flags go before it"},
		{"eval truncated ckpt", []string{"eval", "--ckpt", truncated, samples}, truncated},
		{"nll unknown estimator", []string{"nll", "--ckpt", hold1D, "--estimator", "nope"}, "unknown --estimator"},
		{"nll unknown gauge", []string{"nll", "--ckpt", hold1D, "--gauge", "nope"}, `--gauge "nope"`},
		{"nll truncated ckpt", []string{"nll", "--ckpt", truncated}, truncated},
		{"nll other model", []string{"nll", "--ckpt", other}, "shape"},
		{"nll training seed", []string{"nll", "--ckpt", hold1D, "--data-seed", "0"}, "training seed"},
		{"plot unknown sde", []string{"plot", "flow", "--sdes", "ve", "--out", outPNG}, "unknown --sdes"},
		{"plot unknown sampler", []string{"plot", "blocks", "--sampler", "nope", "--out", outPNG}, "unknown sampler"},
		{"plot unwritable", []string{"plot", "flow", "--out", filepath.Join(missing, "f.png")}, "no such file"},
		{"plot not png", []string{"plot", "flow", "--out", outNPY}, "want a .png"},
		{"plot other sde", []string{"plot", "moments", "--hold", cld1D, "--out", outPNG}, "holds a cld model"},
		{"plot 1-D model", []string{"plot", "moments", "--hold", hold1D, "--out", outPNG}, "needs 2-D data"},
		{"plot truncated ckpt", []string{"plot", "moments", "--cld", truncated, "--out", outPNG}, truncated},
		{"nfe unknown grid", []string{"experiment", "nfe", "--grid", "cubic", "--out", outCSV}, "cubic"},
		{"nfe bad end time", []string{"experiment", "nfe", "--end-time", "xx=1", "--out", outCSV}, "--end-time"},
		{"nfe other sde", []string{"experiment", "nfe", "--cld", hold1D, "--out", outCSV}, "holds a hold model"},
		{"nfe other data", []string{"experiment", "nfe", "--hold", hold2D, "--cld", cld1D, "--out", outCSV}, "one data set"},
		{"nfe truncated ckpt", []string{"experiment", "nfe", "--vp", truncated, "--out", outCSV}, truncated},
		{"nfe missing ckpt", []string{"experiment", "nfe", "--ve", missing, "--out", outCSV}, "no such file"},
		{"nfe unwritable", []string{"experiment", "nfe", "--out", filepath.Join(missing, "t.csv")}, "no such file"},
	}
	ckptBefore, err := os.ReadFile(filepath.Join(hold1D, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := holdctl(t, tc.args...)
			if r.code != 2 {
				t.Errorf("holdctl %s: want exit status 2, got %s", strings.Join(tc.args, " "), r)
			}
			if !strings.Contains(r.stderr, tc.want) {
				t.Errorf("holdctl %s: message lacks %q:\n%s", strings.Join(tc.args, " "), tc.want, r.stderr)
			}
		})
	}
	for p, want := range keep {
		if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s was overwritten (%v)", p, err)
		}
	}
	if after, err := os.ReadFile(filepath.Join(hold1D, ckptName)); err != nil || !bytes.Equal(after, ckptBefore) {
		t.Errorf("the run's checkpoint changed (%v)", err)
	}
	if f, err := checkpoint.Load(filepath.Join(hold1D, ckptName)); err != nil {
		t.Error(err)
	} else if _, err := train.ConfigFromCheckpoint(f); err != nil {
		t.Error(err)
	}
}

// TestCLILocalRanks: --local-ranks 2 trains the same run as one rank (the
// gradients of the two half batches summed: the same losses to float32
// rounding), records the ranks, and resumes on another count.
func TestCLILocalRanks(t *testing.T) {
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one"), filepath.Join(dir, "two")
	mustRun(t, tinyTrain(one, "hold", "swissroll", 40)...)
	r := mustRun(t, tinyTrain(two, "hold", "swissroll", 30, "--local-ranks", "2")...)
	if !strings.Contains(r.stderr, "2 ranks (batch 32 each)") {
		t.Errorf("no ranks in the progress:\n%s", r.stderr)
	}
	if m, err := train.LoadModel(two, false, ""); err != nil || m.Config.Ranks != 2 {
		t.Fatalf("run on 2 local ranks: %v, ranks %d recorded", err, m.Config.Ranks)
	}
	mustRun(t, "train", "--resume", "--out", two, "--steps", "40", "--threads", "1")
	want, got := lossColumns(t, one), lossColumns(t, two)
	if len(got) != len(want) {
		t.Fatalf("%d log rows on 2 ranks, %d on one", len(got), len(want))
	}
	for i := 1; i < len(want); i++ { // after the header
		w, g := strings.Split(want[i], ","), strings.Split(got[i], ",")
		for j := 1; j < len(w); j++ {
			a, _ := strconv.ParseFloat(w[j], 64)
			b, _ := strconv.ParseFloat(g[j], 64)
			if !(math.Abs(a-b) <= 1e-4*math.Abs(a)) {
				t.Errorf("log row %d column %d: %v on 2 local ranks, %v on one", i, j, b, a)
			}
		}
	}
}

// TestCLIDemoSmoke runs the README's main job end to end on a tiny budget:
// it trains, samples, writes the picture and the samples, and prints the
// distances next to the data floor.
func TestCLIDemoSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	r := mustRun(t, "demo", "--steps", "30", "-n", "300", "--nfe", "20", "--out", out)
	for _, want := range []string{"sliced Wasserstein-2", "two independent data sets", "ratio", "improved precision/recall (k = 3)", "roll 5 recall"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("demo output lacks %q:\n%s", want, r)
		}
	}
	if w, h := pngSize(t, filepath.Join(out, "samples.png")); w < 100 || h < 100 {
		t.Errorf("samples.png is %d×%d", w, h)
	}
	if _, shape := readNPYShape(t, filepath.Join(out, "samples.npy")); len(shape) != 2 || shape[0] != 300 || shape[1] != 2 {
		t.Errorf("samples.npy has shape %v, want [300 2]", shape)
	}
	// The recipe of docs/demo.md is what the run records.
	m, err := train.LoadModel(filepath.Join(out, "run-1"), false, "")
	if err != nil {
		t.Fatal(err)
	}
	c := m.Config
	if c.Times != "mixed" || c.TimesLogMin != 3e-2 || !c.LogTime || !c.Estimate || c.Fourier != 64 || c.FourierScale != 10 || c.LRDecay != "cosine" || c.LR != 2e-3 {
		t.Errorf("demo run config %+v: want mixed times from 3e-2, log t, the x̂₀ estimate and 64 Fourier features of it of scale 10, cosine decay from 2e-3", c)
	}
	if c.Ranks != train.DemoRanks || !strings.Contains(r.stderr, fmt.Sprintf("%d ranks (batch %d each)", train.DemoRanks, train.DemoBatch/train.DemoRanks)) {
		t.Errorf("demo trained on %d ranks, want %d local ranks:\n%s", c.Ranks, train.DemoRanks, r.stderr)
	}
}
