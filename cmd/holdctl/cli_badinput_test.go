package main

// Bad input across train, sample, eval, nll, sde and plot (issue 17; holdctl has no fid command
// yet): every case exits 2 with a one-line message naming the bad value, no stack trace, and leaves
// every file that existed before byte-identical (and creates none).

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"holdgo/data"
	"holdgo/internal/parallel"
	"holdgo/internal/procexit"
	"holdgo/internal/runlock"
)

// snapshot maps every file under the roots to the SHA-256 of its bytes (directories to "dir").
func snapshot(t *testing.T, roots ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if e.IsDir() {
				out[p] = "dir"
				return nil
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// diffSnapshots lists what changed between two snapshots.
func diffSnapshots(before, after map[string]string) []string {
	var d []string
	for p, h := range before {
		switch a, ok := after[p]; {
		case !ok:
			d = append(d, "removed "+p)
		case a != h:
			d = append(d, "changed "+p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			d = append(d, "created "+p)
		}
	}
	return d
}

// writeFiles writes name → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func idxHeader(dims ...uint32) []byte {
	b := []byte{0, 0, 8, byte(len(dims))}
	for _, d := range dims {
		b = append(b, byte(d>>24), byte(d>>16), byte(d>>8), byte(d))
	}
	return b
}

// pointsRun trains a tiny run on a .npy file of 1-D points in dir and returns the run and the file.
func pointsRun(t *testing.T, dir string) (run, pts string) {
	t.Helper()
	pts = filepath.Join(dir, "pts.npy")
	v := make([]float32, 128)
	for i := range v {
		v[i] = float32(i%9)/4 - 1
	}
	if err := data.WriteNPY32(pts, v, len(v), 1); err != nil {
		t.Fatal(err)
	}
	run = filepath.Join(dir, "ptsrun")
	mustRun(t, tinyTrain(run, "hold", pts, 20)...)
	return run, pts
}

func TestCLIBadInputTable(t *testing.T) {
	hold1D, _, _ := trainedRuns(t)
	w := t.TempDir()
	ptsRun, _ := pointsRun(t, w)
	noCopy := filepath.Join(w, "nocopy")
	if err := os.CopyFS(noCopy, os.DirFS(ptsRun)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(noCopy, "data.npy")); err != nil {
		t.Fatal(err)
	}
	writeFiles(t, w, map[string]string{
		"nan.yaml":     "grad_clip: .nan\n",
		"alpha.yaml":   "sde: vp\nalpha: .inf\n",
		"empty.yaml":   "",
		"comment.yaml": "# nothing here\n",
		"unknown.yaml": "stepz: 3\n",
		"twodoc.yaml":  "steps: 3\n---\nsteps: 4\n",
		"contra.yaml":  "lr: 0.5\n",
		"notes.txt":    "keep me\n",
		"overflow.idx": string(idxHeader(1<<28, 1<<28, 1<<28)),
		"zero.idx":     string(idxHeader(0, 28, 28)),
		"side0.idx":    string(idxHeader(4, 0, 28)),
		"huge.csv": "sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\n" +
			"a,quadratic,10,9,0,1.7e308,0,1,1\na,quadratic,20,19,0,0.1,0,1,1\n",
		"tiny.csv": "sampler,grid,nfe,steps,tol,w1,w1_sd,width_ratio,width_dev\n" +
			"a,quadratic,10,9,0,4e-310,0,1,1\na,quadratic,20,19,0,0.1,0,1,1\n",
	})
	if n := len(idxHeader(1<<28, 1<<28, 1<<28)); n != 16 {
		t.Fatalf("overflow IDX is %d bytes, want 16", n)
	}
	for _, d := range []string{"dir.npy", "dir.png"} {
		if err := os.Mkdir(filepath.Join(w, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := func(name string) string { return filepath.Join(w, name) }
	for name, v := range map[string][]float32{
		"samples.npy": {0.1, -0.2, 0.3, 0.5, -1, 1},
		"nanpts.npy":  {0.1, float32(math.NaN()), 0.3},
		"other.npy":   {1, 2, 3, 4},
	} {
		if err := data.WriteNPY32(f(name), v, len(v), 1); err != nil {
			t.Fatal(err)
		}
	}
	newRun := f("new-run") // must not exist after any case
	tt := func(extra ...string) []string {
		return append([]string{"train", "--hidden", "16", "--layers", "2", "--batch", "64", "--steps", "5", "--threads", "1", "--out", newRun}, extra...)
	}
	smp := func(extra ...string) []string {
		return append([]string{"sample", "--ckpt", hold1D, "--n", "10", "--nfe", "10", "--threads", "1", "--out", f("s.npy")}, extra...)
	}
	orc := func(extra ...string) []string {
		return append([]string{"sample", "--oracle", "--n", "10", "--nfe", "10", "--out", f("s.npy")}, extra...)
	}
	nll := func(extra ...string) []string {
		return append([]string{"nll", "--ckpt", hold1D, "--n", "4", "--threads", "1"}, extra...)
	}
	eval := func(extra ...string) []string { return append(append([]string{"eval"}, extra...), f("samples.npy")) }
	resume := func(extra ...string) []string {
		return append([]string{"train", "--resume", "--out", ptsRun, "--threads", "1"}, extra...)
	}
	cases := []struct {
		name string
		args []string
		want string // in the message: the bad value or what names it
	}{
		// issue 17's "Why" list
		{"idx overflow", tt("--data", "idx:"+f("overflow.idx"), "--model", "ncsnpp-small"), "cap of 8 GiB"},
		{"idx zero dims", tt("--data", "idx:"+f("zero.idx"), "--model", "ncsnpp-small"), "zero dimension"},
		{"idx zero side", tt("--data", "idx:"+f("side0.idx"), "--model", "ncsnpp-small"), "zero dimension"},
		{"grad-clip NaN", tt("--grad-clip", "NaN"), "grad-clip must be finite and ≥ 0 (0 disables it), got NaN"},
		{"alpha NaN vp", tt("--alpha", "NaN", "--sde", "vp"), "alpha must be finite and ≥ 0, got NaN"},
		{"swiss-noise NaN", tt("--swiss-noise", "NaN"), "swiss-noise must be finite and ≥ 0, got NaN"},
		{"dropout NaN", tt("--dropout", "NaN"), "dropout must be in [0, 1), got NaN"},
		{"config grad_clip .nan", tt("--config", f("nan.yaml")), "grad-clip must be finite and ≥ 0 (0 disables it), got NaN"},
		{"config alpha .inf", tt("--config", f("alpha.yaml")), "got +Inf"},
		{"deleted copy of the points", []string{"sample", "--ckpt", noCopy, "--n", "5", "--out", f("s.npy")}, "--train-data"},
		{"re-pointed points differ", []string{"sample", "--ckpt", ptsRun, "--n", "5", "--out", f("s.npy"), "--train-data", f("other.npy")}, "sha256"},
		{"sample --n huge", smp("--n", "9223372036854775807"), "9223372036854775807"},
		{"sample --n overflowing int", smp("--n", "99999999999999999999"), "99999999999999999999"},
		{"sample --n huge picture", smp("--n", "200000000", "--out", f("s.png")), "200000000"},
		{"resume contradicting lr", resume("--lr", "0.5"), "lr: stored 0.001, given 0.5"},
		{"resume contradicting several", resume("--order", "2", "--batch", "32", "--sde", "cld"), "order: stored 3, given 2"},
		{"resume contradicting config", resume("--config", f("contra.yaml")), "lr: stored 0.001, given 0.5"},
		{"resume contradicting data", resume("--data", f("other.npy")), "data: stored"},
		{"nf out of range", tt("--nf", "-1"), "nf must be in [0, 4096] (0: the preset's), got -1"},
		{"res-blocks out of range", tt("--res-blocks", "-2"), "got -2"},
		{"nfe out of range", smp("--nfe", "-5"), "-5"},
		{"threads out of range", tt("--threads", "-1"), "got -1"},
		{"empty config", tt("--config", f("empty.yaml")), "is empty"},
		{"comment-only config", tt("--config", f("comment.yaml")), "holds no keys"},
		{"samples onto a directory", smp("--out", f("dir.npy")), "dir.npy is a directory"},
		{"picture onto a directory", orc("--out", f("dir.png")), "dir.png is a directory"},
		// train: every numeric key
		{"lr Inf", tt("--lr", "Inf"), "lr must be positive and finite, got +Inf"},
		{"lr negative", tt("--lr", "-1e-3"), "got -0.001"},
		{"ema 1", tt("--ema", "1"), "ema must be in [0, 1), got 1"},
		{"ema NaN", tt("--ema", "NaN"), "got NaN"},
		{"L zero", tt("--L", "0"), "L must be positive and finite, got 0"},
		{"L -Inf", tt("--L", "-Inf"), "got -Inf"},
		{"order 7", tt("--order", "7"), "got 7"},
		{"order 0 vp", tt("--order", "0", "--sde", "vp"), "got 0"},
		{"batch 0", tt("--batch", "0"), "batch must be in [1, 1048576], got 0"},
		{"batch huge", tt("--batch", "99999999"), "got 99999999"},
		{"hidden 0", tt("--hidden", "0"), "hidden must be in [1, 65536], got 0"},
		{"hidden huge", tt("--hidden", "1000000"), "got 1000000"},
		{"layers 0", tt("--layers", "0"), "layers must be in [1, 1024], got 0"},
		{"steps negative", tt("--steps", "-5"), "got -5"},
		{"warmup negative", tt("--warmup", "-1"), "warmup must be ≥ 0, got -1"},
		{"ckpt-every negative", tt("--ckpt-every", "-1"), "got -1"},
		{"threads huge", tt("--threads", "1000000"), "got 1000000"},
		{"local ranks zero", tt("--local-ranks", "0"), "--local-ranks must be in [1,"},
		{"local ranks huge", tt("--local-ranks", "100000"), "got 100000"},
		{"local ranks uneven batch", tt("--local-ranks", "3"), "multiple of 3"},
		{"local ranks on cuda", tt("--local-ranks", "2", "--device", "cuda"), "--local-ranks trains on the CPU"},
		{"dist unknown", tt("--dist", "gloo"), `--dist "gloo": want host or nccl`},
		{"dist nccl on the cpu", tt("--dist", "nccl"), "--dist nccl sums gradients in GPU memory: it needs --device cuda"},
		{"dist nccl without a usable NCCL", tt("--dist", "nccl", "--device", "cuda"), "--dist nccl: "}, // no GPU build, or every path tried
		{"log-every 0", tt("--log-every", "0"), "--log-every must be ≥ 1, got 0"},
		{"time-limit negative", tt("--time-limit", "-1s"), "got -1s"},
		{"steps not a number", tt("--steps", "ten"), "ten"},
		{"unknown sde", tt("--sde", "ou"), `"ou"`},
		{"unknown objective", tt("--objective", "mse"), `"mse"`},
		{"unknown times", tt("--times", "often"), `"often"`},
		{"sigma times junk", tt("--times", "sigma:edm:junk"), `"sigma:edm:junk"`},
		{"sigma times bad range", tt("--times", "sigma:loguniform:0,-1"), `"0,-1"`},
		{"sigma times NaN", tt("--times", "sigma:loguniform:nan,1"), `"nan,1"`},
		{"unknown precond", tt("--precond", "fancy"), `"fancy"`},
		{"precond with dsm", tt("--precond", "edm", "--objective", "dsm"), "precond edm needs"},
		{"sigma times outside VE", tt("--sde", "ve", "--times", "sigma:loguniform:1e-6,1e-4"), "puts no mass"},
		{"unknown model", tt("--model", "resnet"), `"resnet"`},
		{"unknown data", tt("--data", "nope"), `"nope"`},
		{"missing points", tt("--data", f("missing.npy")), "missing.npy"},
		{"NaN points", tt("--data", f("nanpts.npy")), "NaN"},
		{"unknown config key", tt("--config", f("unknown.yaml")), "stepz"},
		{"two config documents", tt("--config", f("twodoc.yaml")), "more than one YAML document"},
		{"missing config", tt("--config", f("none.yaml")), "none.yaml"},
		{"train argument", append(tt(), "extra"), `"extra"`},
		{"train over a run", []string{"train", "--out", ptsRun, "--steps", "5"}, "already holds a run"},
		{"train into a file", tt("--out", f("notes.txt")), "notes.txt is a file"},
		{"resume missing run", []string{"train", "--resume", "--out", f("none")}, "none"},
		// sample
		{"sample n 0", smp("--n", "0"), "got 0"},
		{"sample n negative", smp("--n", "-3"), "got -3"},
		{"sample eps NaN", smp("--eps", "NaN"), "--eps must be positive and finite (below the horizon T), got NaN"},
		{"sample eps beyond T", smp("--eps", "50"), "--eps 50"},
		{"sample tol NaN", smp("--tol", "NaN", "--sampler", "ode"), "--tol must be in (0, 1), got NaN"},
		{"sample steps 0", smp("--nfe", "0", "--steps", "0"), "--steps must be in [1, 1048576], got 0"},
		{"sample tol 1", smp("--tol", "1"), "--tol must be in (0, 1), got 1"},
		{"sample unknown grid", smp("--grid", "cubic"), `"cubic"`},
		{"sample clip NaN on lt", smp("--clip", "NaN"), "--clip must be finite and ≥ 0 (0: off), got NaN"},
		{"sample clip negative on lt", smp("--clip", "-1"), "--clip must be finite and ≥ 0 (0: off), got -1"},
		{"sample clip infinite", smp("--clip", "inf", "--sampler", "xdpm2"), "--clip must be finite and ≥ 0 (0: off), got +Inf"},
		{"sample eta NaN", smp("--eta", "NaN"), "--eta must be in [0, 1], got NaN"},
		{"sample eta above 1", smp("--eta", "1.5", "--sampler", "xanc"), "1.5"},
		{"sample sigma-min negative", smp("--sigma-min", "-1"), "--sigma-min must be finite and ≥ 0 (0: the default), got -1"},
		{"sample sigma-min NaN on a sigma grid", smp("--sigma-min", "NaN", "--grid", "edm"), "--sigma-min must be finite and ≥ 0 (0: the default), got NaN"},
		{"sample a-ode with nfe", smp("--sampler", "a-ode"), "a-ode is adaptive"},
		{"sample ode with nfe", smp("--sampler", "ode"), "ode is adaptive"},
		{"sample out txt", smp("--out", f("s.txt")), "s.txt"},
		{"sample threads", smp("--threads", "-2"), "got -2"},
		{"sample train-data on gmm1d", smp("--train-data", f("other.npy")), "other.npy"},
		{"oracle alpha NaN", orc("--alpha", "NaN"), "NaN"},
		{"oracle L Inf", orc("--L", "Inf"), "+Inf"},
		{"oracle alpha NaN vp", orc("--alpha", "NaN", "--sde", "vp"), "alpha must be finite and ≥ 0, got NaN"},
		{"oracle swissroll", orc("--data", "swissroll"), "swissroll"},
		{"oracle order 9", orc("--order", "9"), "9"},
		// eval
		{"eval n 1", eval("--n", "1"), "--n must be in [2, 67108864], got 1"},
		{"eval kernel-points 1", eval("--kernel-points", "1"), "--kernel-points must be in [2, 65536], got 1"},
		{"eval projections 0", eval("--projections", "0"), "--projections must be in [1, 65536], got 0"},
		{"eval swiss-noise NaN", eval("--data", "swissroll", "--swiss-noise", "NaN"), "NaN"},
		{"eval NaN samples", []string{"eval", f("nanpts.npy")}, "NaN"},
		{"eval not npy", []string{"eval", f("notes.txt")}, "notes.txt"},
		{"eval missing samples", []string{"eval", f("gone.npy")}, "gone.npy"},
		{"eval seed negative", eval("--seed", "-1"), "-1"},
		{"eval deleted copy", eval("--ckpt", noCopy), "--train-data"},
		// nll
		{"nll n 1", nll("--n", "1"), "--n must be ≥ 2 for point data, got 1"},
		{"nll batch 0", nll("--batch", "0"), "--batch must be in [1, 65536], got 0"},
		{"nll tol NaN", nll("--tol", "NaN"), "--tol must be in (0, 1), got NaN"},
		{"nll eps NaN", nll("--eps", "NaN"), "--eps must be positive and finite (below the horizon T), got NaN"},
		{"nll estimator", nll("--estimator", "guess"), `"guess"`},
		{"nll missing data", nll("--data", f("gone.npy")), "gone.npy"},
		{"nll threads", nll("--threads", "99999"), "got 99999"},
		{"nll deleted copy", []string{"nll", "--ckpt", noCopy, "--n", "4"}, "--train-data"},
		// sde
		{"sde L NaN", []string{"sde", "--L", "NaN", "--t", "0.5"}, "NaN"},
		{"sde alpha NaN", []string{"sde", "--alpha", "NaN", "--t", "0.5"}, "NaN"},
		{"sde t NaN", []string{"sde", "--t", "NaN"}, "NaN"},
		{"sde t beyond T", []string{"sde", "--t", "1e9"}, "1e+09"},
		{"sde astep NaN", []string{"sde", "--t", "0.5", "--astep", "NaN"}, "NaN"},
		{"sde unknown kind", []string{"sde", "--sde", "ou"}, `"ou"`},
		{"sde order 9", []string{"sde", "--order", "9", "--t", "0.5"}, "9"},
		// plot
		{"bench ncsnpp profile over a run's checkpoint", []string{"bench", "ncsnpp", "--python", "", "--cpuprofile", filepath.Join(hold1D, "ckpt.safetensors")}, "belongs to the run"},
		{"bench ncsnpp profile over a config", []string{"bench", "ncsnpp", "--python", "", "--cpuprofile", f("nan.yaml")}, "nan.yaml"},
		{"bench train batch beyond memory", []string{"bench", "train", "--model", "ncsnpp-cifar10", "--batch", "4096", "--steps", "1"}, "over the memory budget"},
		{"plot nfe value near the float64 maximum", []string{"plot", "nfe", "--csv", f("huge.csv"), "--out", f("p.png")}, "1.7e+308"},
		{"plot nfe subnormal value", []string{"plot", "nfe", "--csv", f("tiny.csv"), "--out", f("p.png")}, "4e-310"},
		{"plot flow tol NaN", []string{"plot", "flow", "--tol", "NaN", "--out", f("p.png")}, "--tol must be in (0, 1), got NaN"},
		{"plot flow paths 0", []string{"plot", "flow", "--paths", "0", "--out", f("p.png")}, "--paths must be in [1, 10000], got 0"},
		{"plot flow tol Inf", []string{"plot", "flow", "--tol", "Inf", "--out", f("p.png")}, "--tol must be in (0, 1), got +Inf"},
		{"plot flow out dir", []string{"plot", "flow", "--out", f("dir.png")}, "dir.png"},
		{"plot blocks steps 0", []string{"plot", "blocks", "--steps", "0", "--out", f("p.png")}, "--steps must be in [1, 1048576], got 0"},
		{"plot blocks order 9", []string{"plot", "blocks", "--order", "9", "--out", f("p.png")}, "9"},
		{"plot moments n 0", []string{"plot", "moments", "--n", "0", "--out", f("p.png")}, "--n must be in [1, 16777216], got 0"},
		{"plot moments grid", []string{"plot", "moments", "--grid", "cubic", "--out", f("p.png")}, `"cubic"`},
	}
	if len(cases) < 60 {
		t.Fatalf("%d cases, want at least 60", len(cases))
	}
	roots := []string{w, filepath.Dir(hold1D)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := snapshot(t, roots...)
			r := holdctl(t, tc.args...)
			msg := strings.TrimRight(r.stderr, "\n")
			switch {
			case r.code != 2:
				t.Errorf("holdctl %s: want exit status 2, got %s", strings.Join(tc.args, " "), r)
			case strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "holdctl"):
				t.Errorf("holdctl %s: want one line starting holdctl, got:\n%s", strings.Join(tc.args, " "), r.stderr)
			case strings.Contains(r.stderr, "goroutine ") || strings.Contains(r.stderr, "panic"):
				t.Errorf("holdctl %s: stack trace:\n%s", strings.Join(tc.args, " "), r.stderr)
			case !strings.Contains(msg, tc.want):
				t.Errorf("holdctl %s: message lacks %q:\n%s", strings.Join(tc.args, " "), tc.want, msg)
			}
			if d := diffSnapshots(before, snapshot(t, roots...)); len(d) > 0 {
				t.Errorf("holdctl %s changed files: %v", strings.Join(tc.args, " "), d)
			}
		})
	}
}

// TestCLIConcurrentTrains starts two trainings into one --out at once: exactly one runs, the other
// exits 2 within a second naming the owner's pid; a --resume while it runs is refused the same way.
func TestCLIConcurrentTrains(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	args := tinyTrain(out, "hold", "gmm1d", 10000000, "--ckpt-every", "0")
	type done struct {
		cmd     *exec.Cmd
		err     error
		elapsed time.Duration
		stderr  *bytes.Buffer
	}
	results := make(chan done, 2)
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command(holdctlBin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		go func() {
			err := cmd.Wait()
			results <- done{cmd, err, time.Since(start), &stderr}
		}()
	}
	defer func() {
		for _, c := range cmds {
			c.Process.Kill()
		}
	}()
	var loser done
	select {
	case loser = <-results:
	case <-time.After(10 * time.Second):
		t.Fatal("neither training exited: both run")
	}
	var exit *exec.ExitError
	if !errors.As(loser.err, &exit) || exit.ExitCode() != 2 {
		t.Fatalf("first to exit: %v, want exit status 2; stderr:\n%s", loser.err, loser.stderr)
	}
	winner := cmds[0]
	if loser.cmd == cmds[0] {
		winner = cmds[1]
	}
	owner := fmt.Sprintf("locked by pid %d on host ", winner.Process.Pid)
	if msg := loser.stderr.String(); !strings.Contains(msg, owner) || strings.Count(strings.TrimSpace(msg), "\n") != 0 {
		t.Errorf("loser's message %q does not name %q on one line", msg, owner)
	}
	t.Logf("the loser exited in %v: %s", loser.elapsed.Round(time.Millisecond), strings.TrimSpace(loser.stderr.String()))
	if loser.elapsed > time.Second {
		t.Errorf("the loser took %v to exit, want under a second", loser.elapsed)
	}
	r := holdctl(t, "train", "--resume", "--out", out, "--threads", "1")
	if r.code != 2 || !strings.Contains(r.stderr, owner) {
		t.Errorf("--resume on the running directory: %s", r)
	}
	if err := winner.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case won := <-results:
		if !errors.As(won.err, &exit) || exit.ExitCode() != 130 {
			t.Fatalf("the running training after SIGINT: %v; stderr:\n%s", won.err, won.stderr)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the running training did not stop on SIGINT")
	}
	// The lock is free again and the interrupted run resumes.
	mustRun(t, "train", "--resume", "--out", out, "--threads", "1", "--steps", "0")
}

// TestCLIStaleLockAndTempFiles: a lock file left by a dead process of this host is taken over with a
// warning, and temporary files of killed checkpoint writes are removed, at resume; a user's file that
// merely looks like one stays. A lock naming another host is refused unless --force-unlock.
func TestCLIStaleLockAndTempFiles(t *testing.T) {
	run, _ := pointsRun(t, t.TempDir())
	stale := filepath.Join(run, ".ckpt.safetensors.tmp-123456")
	user := filepath.Join(run, ".notes.tmp-draft")
	host, _ := os.Hostname()
	writeFiles(t, run, map[string]string{
		filepath.Base(stale): "half a checkpoint",
		filepath.Base(user):  "the user's",
		runlock.Name:         "pid 4194305 on host elsewhere\n",
	})
	r := holdctl(t, "train", "--resume", "--out", run, "--steps", "30", "--threads", "1")
	if r.code != 2 || !strings.Contains(r.stderr, "--force-unlock") || !strings.Contains(r.stderr, "pid 4194305 on host elsewhere") {
		t.Fatalf("resume under another host's lock: want exit 2 naming the owner and --force-unlock, got %s", r)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Fatalf("a refused resume removed %s (%v)", stale, err)
	}
	writeFiles(t, run, map[string]string{runlock.Name: "pid 4194305 on host " + host + "\n"})
	r = mustRun(t, "train", "--resume", "--out", run, "--steps", "30", "--threads", "1")
	if !strings.Contains(r.stderr, "took over the stale lock of pid 4194305 on host "+host) {
		t.Errorf("no stale-lock warning:\n%s", r.stderr)
	}
	if !strings.Contains(r.stderr, "removed stale temporary files") || !strings.Contains(r.stderr, filepath.Base(stale)) {
		t.Errorf("no note of the removed temporary file:\n%s", r.stderr)
	}
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still exists (%v)", stale, err)
	}
	if b, err := os.ReadFile(user); err != nil || string(b) != "the user's" {
		t.Errorf("the user's %s: %q (%v)", user, b, err)
	}
	if b, err := os.ReadFile(filepath.Join(run, runlock.Name)); err != nil || len(b) != 0 {
		t.Errorf("lock file after the run: %q (%v), want empty", b, err)
	}
}

// TestCLIRunOwnsItsPoints: a run trained on a .npy file samples, evaluates and resumes after the
// file is deleted (from another working directory too), and --train-data re-points it.
func TestCLIRunOwnsItsPoints(t *testing.T) {
	dir := t.TempDir()
	run, pts := pointsRun(t, dir)
	moved := filepath.Join(dir, "moved.npy")
	if err := os.Rename(pts, moved); err != nil {
		t.Fatal(err)
	}
	s1, s2 := filepath.Join(dir, "s1.npy"), filepath.Join(dir, "s2.npy")
	mustRun(t, "sample", "--ckpt", run, "--n", "50", "--nfe", "10", "--threads", "1", "--out", s1)
	mustRun(t, "sample", "--ckpt", run, "--n", "50", "--nfe", "10", "--threads", "1", "--out", s2, "--train-data", moved)
	a, _ := os.ReadFile(s1)
	b, _ := os.ReadFile(s2)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("samples through the run's copy and through --train-data differ")
	}
	mustRun(t, "eval", "--ckpt", run, "--n", "100", s1)
	mustRun(t, "nll", "--ckpt", run, "--n", "4", "--threads", "1", "--tol", "1e-3")
	mustRun(t, "train", "--resume", "--out", run, "--steps", "30", "--threads", "1")
	cmd := exec.Command(holdctlBin, "sample", "--ckpt", "ptsrun", "--n", "5", "--nfe", "5", "--threads", "1", "--out", "s3.npy")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("sample with a relative --ckpt from the run's parent: %v\n%s", err, out)
	}
}

// TestCLIResumeHelp: --help says which flags a resume may change.
func TestCLIResumeHelp(t *testing.T) {
	r := mustRun(t, "train", "--help")
	if !strings.Contains(strings.Join(strings.Fields(r.stdout), " "), "only --steps, --ckpt-every, --log-every, --threads, --local-ranks and --time-limit may differ") {
		t.Errorf("train --help does not say what --resume may change:\n%s", r.stdout)
	}
}

// TestWorkerPanicIsInternalError: a panic on a worker goroutine, which
// main's recover cannot catch, still ends holdctl with the internal-error
// line and exit status 3 (not Go's status 2, which reads as bad input).
// The child process installs main's handler and panics on a worker.
func TestWorkerPanicIsInternalError(t *testing.T) {
	if os.Getenv("HOLDCTL_WORKER_PANIC_CHILD") == "1" {
		procexit.ReportWorkerPanics("holdctl", version)
		var wg sync.WaitGroup
		parallel.Go(&wg, func() { panic("deliberate worker panic") })
		wg.Wait()
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerPanicIsInternalError$")
	cmd.Env = append(os.Environ(), "HOLDCTL_WORKER_PANIC_CHILD=1", "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitInternal {
		t.Fatalf("child: err %v, want exit status %d; output:\n%s", err, exitInternal, out)
	}
	if !strings.Contains(string(out), "internal error (a bug, not your input): deliberate worker panic") ||
		strings.Contains(string(out), "goroutine ") {
		t.Fatalf("want the one-line internal-error report and no trace on stderr, got:\n%s", out)
	}
}
