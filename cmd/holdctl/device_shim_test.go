//go:build cudashim || cuda

package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"holdgo/bench"
	"holdgo/checkpoint"
	"holdgo/cuda"
	"holdgo/data"

	"github.com/urfave/cli/v2"
)

// holdctl-shim: the CLI's --device cuda runs the CUDA kernels on the CPU through the host shim;
// these tests compare it with --device cpu on the same seed (see train/device_test.go for why the
// runs differ at all).

// writePNGs writes n 8×8 RGB images with smooth, image-dependent content into dir.
func writePNGs(t *testing.T, dir string, n int) {
	t.Helper()
	for k := range n {
		img := image.NewRGBA(image.Rect(0, 0, 8, 8))
		for y := range 8 {
			for x := range 8 {
				v := func(c int) uint8 {
					return uint8(128 + 120*math.Sin(float64(x*(k%5+1)+y*(c+1)+k)/3))
				}
				img.Set(x, y, color.RGBA{v(0), v(1), v(2), 255})
			}
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("img%03d.png", k)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
}

// readLosses returns the loss column of a run's log.csv.
func readLosses(t *testing.T, dir string) []float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, logName))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var out []float64
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

const ncsnSteps = 3

// paramsNMSE compares the model weights of two checkpoints.
func paramsNMSE(t *testing.T, a, b string) float64 {
	t.Helper()
	fa, err := checkpoint.Load(filepath.Join(a, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	fb, err := checkpoint.Load(filepath.Join(b, ckptName))
	if err != nil {
		t.Fatal(err)
	}
	var num, den float64
	for _, name := range fa.Names() {
		if strings.HasPrefix(name, "ema.") || strings.HasPrefix(name, "adam_") {
			continue
		}
		x, err := fa.Float32(name)
		if err != nil {
			continue // not a float32 tensor
		}
		y, err := fb.Float32(name)
		if err != nil {
			t.Fatal(err)
		}
		for i := range x {
			d := float64(x[i]) - float64(y[i])
			num += d * d
			den += float64(y[i]) * float64(y[i])
		}
	}
	return num / den
}

// ncsnpp-tiny on a folder of 64 images on the shim in strict FP32 (--precision strict: the
// implicit-GEMM convolutions' FFMA kernels, hg_sgemm) and on the CPU: every logged loss within 1e-6
// relative, the final weights within NMSE 1e-12 (issue 44's bar: the same training up to the
// float32 sums' order; measured 9e-10 and 7e-17 over 20 steps of batch 4). The run is 20 steps of batch 4; one shim
// step of ncsnpp-tiny costs about a minute of CPU (≈960 launches, every GPU thread a fiber), so
// by default the test runs 3 steps of batch 2 — the same code path. HOLDGO_SHIM_ACCEPTANCE=1 runs
// the 20 steps of batch 4 (CI does: kernels/ci.sh).
func TestShimNCSNppTinyMatchesCPU(t *testing.T) {
	steps, batch := ncsnSteps, 2
	if os.Getenv("HOLDGO_SHIM_ACCEPTANCE") == "1" {
		steps, batch = 20, 4
	}
	dir := t.TempDir()
	imgs := filepath.Join(dir, "imgs")
	os.Mkdir(imgs, 0o755)
	writePNGs(t, imgs, 64)
	runs := map[string]string{"cuda": filepath.Join(dir, "A"), "cpu": filepath.Join(dir, "B")}
	for dev, out := range runs {
		if out, err := runSub(t, trainCommand(), "--device", dev, "--precision", "strict", "--data", "images:"+imgs, "--model", "ncsnpp-tiny",
			"--steps", strconv.Itoa(steps), "--batch", strconv.Itoa(batch), "--seed", "1", "--log-every", "1", "--dropout", "0.1", "--out", out); err != nil {
			t.Fatalf("train --device %s: %v\n%s", dev, err, out)
		}
	}
	a, b := readLosses(t, runs["cuda"]), readLosses(t, runs["cpu"])
	if len(a) != steps || len(b) != steps {
		t.Fatalf("%d and %d logged losses, want %d", len(a), len(b), steps)
	}
	worst := 0.0
	for i := range a {
		worst = max(worst, math.Abs(a[i]-b[i])/math.Abs(b[i]))
	}
	if !(worst <= 1e-6) {
		t.Errorf("losses differ by up to %.3g relative:\n cuda %v\n cpu  %v", worst, a, b)
	}
	e := paramsNMSE(t, runs["cuda"], runs["cpu"])
	if !(e <= 1e-12) {
		t.Errorf("final weights NMSE %.3g > 1e-12", e)
	}
	t.Logf("ncsnpp-tiny, %d steps of batch %d: worst loss relative difference %.3g, weights NMSE %.3g", steps, batch, worst, e)
}

// A non-logging training step of ncsnpp-tiny on the device does no host synchronisation and one
// host-to-device copy, the staged data batch (with its times and reparameterisation
// coefficients); a logging step adds the one read of the loss and gradient norm. bench train
// prints the same counts.
func TestShimNCSNppStepCounters(t *testing.T) {
	dev, counting := cuda.NewCountingDevice(testBackend(t))
	res, err := bench.Train(dev, counting, "ncsnpp-tiny", "hold", 1, 1, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	if s := res.Step; s.HostSyncs() != 0 || s.HtoD != 1 || s.Launches == 0 {
		t.Errorf("non-logging step: %v; want 0 host syncs and 1 H→D copy", s)
	}
	if s := res.LoggingStep; s.HostSyncs() != 1 || s.HtoD != 1 || s.DtoH != 1 {
		t.Errorf("logging step: %v; want 1 host sync (the D→H copy of the scalars) and 1 H→D copy", s)
	}
	var sb strings.Builder
	bench.WriteTrain(&sb, res, 1)
	for _, want := range []string{"per non-logging step:", "0 host synchronisations, 1 H→D copies", "logging step:", "hg_time_embed 1"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("bench train output lacks %q:\n%s", want, sb.String())
		}
	}
	t.Log("\n" + sb.String())
}

// bench train --profile times one more non-logging step call by call: every launch of a
// non-logging step appears in the profile with its count (the kernels, the one memset, the pinned
// upload), each with a positive device time, the implicit convolutions with their byte and FLOP
// models; the table and the JSON carry it; a device that cannot time is refused with exit 2.
func TestShimProfiledStep(t *testing.T) {
	dev, counting := cuda.NewCountingDevice(testBackend(t))
	res, err := bench.Train(dev, counting, "ncsnpp-tiny", "hold", 1, 1, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	for name, n := range res.Step.LaunchesByKernel {
		e := res.Profile[name]
		if e.Calls != n || !(e.Seconds > 0) {
			t.Errorf("%s: %d launches in the step, profile %+v", name, n, e)
		}
	}
	for _, name := range []string{"hg_conv_fwd_f32_64", "hg_conv_wgrad_f32_64"} {
		if e := res.Profile[name]; e.Family != "conv" || e.Bytes <= 0 || e.FLOPs <= 0 {
			t.Errorf("%s: profile %+v, want family conv with bytes and FLOPs", name, e)
		}
	}
	if e := res.Profile["copy H→D (pinned)"]; e.Calls != 1 || e.Bytes != res.Step.HtoDBytes {
		t.Errorf("the staged upload: profile %+v, step %v", e, res.Step)
	}
	var sb strings.Builder
	bench.WriteProfile(&sb, res.Profile, res.StepSeconds)
	for _, want := range []string{"profile (one non-logging step", "family", "conv", "slowest kernels", "profiled step:"} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("the profile lacks %q:\n%s", want, sb.String())
		}
	}
	j, err := json.Marshal(res.JSON(1))
	if err != nil || !strings.Contains(string(j), `"profile":{`) || !strings.Contains(string(j), `"hg_conv_fwd_f32_64":{"family":"conv"`) {
		t.Errorf("--json: %s (%v)", j, err)
	}
	app := newApp()
	app.Writer, app.ErrWriter = io.Discard, io.Discard
	err = app.Run([]string{"holdctl", "bench", "train", "--device", "cpu", "--model", "ncsnpp-tiny", "--profile"})
	var exit cli.ExitCoder
	if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(err.Error(), "--profile needs a CUDA device") {
		t.Errorf("--profile on the CPU: %v, want exit status 2 saying it needs a CUDA device", err)
	}
	t.Log("\n" + sb.String())
}

// bench conv --tiles writes through the output guard, and is refused (exit 2, nothing timed or
// written) where the guard refuses: a missing folder, a directory, a file of another kind.
func TestShimBenchConvTilesGuard(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "x.png")
	if err := os.WriteFile(png, []byte("\x89PNG\r\n\x1a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, want string }{
		{filepath.Join(dir, "none", "t.json"), "does not exist"}, {dir, "is a directory"}, {png, "holds a PNG picture"},
	} {
		app := newApp()
		app.Writer, app.ErrWriter = io.Discard, io.Discard
		err := app.Run([]string{"holdctl", "bench", "conv", "--device", "cuda", "--model", "ncsnpp-tiny", "--batch", "1", "--tiles", c.path})
		var exit cli.ExitCoder
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--tiles %s: %v, want exit status 2 saying %q", c.path, err, c.want)
		}
	}
}

// sample --device cuda against --device cpu on a toy checkpoint (trained on the CPU here), the same
// seed: the samples agree to float32 rounding (the device state is float32, the CPU's float64),
// well within the 1e-3. The difference is relative to the samples' size: a run whose
// samples fly off to |x| ~ 10³ (too few steps for EM on a young network) differs by ~1e-3 at the
// float32 resolution of those values, so the checkpoint and NFE here give samples of order one,
// which the test checks first.
func TestShimSampleMatchesCPU(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if out, err := runSub(t, trainCommand(), "--data", "swissroll", "--steps", "1000", "--batch", "128", "--seed", "2",
		"--out", run, "--log-every", "100"); err != nil {
		t.Fatalf("train: %v\n%s", err, out)
	}
	for _, sampler := range []string{"lt", "em", "ode"} {
		got := map[string][]float32{}
		for _, dev := range []string{"cpu", "cuda"} {
			out := filepath.Join(dir, sampler+"-"+dev+".npy")
			budget := []string{"--nfe", "40"}
			if sampler == "ode" { // adaptive: its evaluations follow --tol, and it refuses --nfe
				budget = nil
			}
			args := append([]string{"--ckpt", run, "--sampler", sampler, "--n", "24", "--seed", "5", "--device", dev, "--out", out}, budget...)
			o, err := runSub(t, sampleCommand(), args...)
			if err != nil {
				t.Fatalf("sample --sampler %s --device %s: %v\n%s", sampler, dev, err, o)
			}
			// On the device lt and em keep the state there; ode integrates on the host and says why.
			if note := strings.Contains(o, "integrates the state on the host: ode has no device implementation"); note != (dev == "cuda" && sampler == "ode") {
				t.Errorf("sample --sampler %s --device %s: host-integration note %v, output:\n%s", sampler, dev, note, o)
			}
			pts, err := data.FromNPY(out)
			if err != nil {
				t.Fatal(err)
			}
			got[dev] = pts.Data()
		}
		worst, size := 0.0, 0.0
		for _, v := range got["cpu"] {
			size = max(size, math.Abs(float64(v)))
		}
		if size > 10 {
			t.Fatalf("%s: samples up to |x| = %.3g: the checkpoint or the NFE is too small for a meaningful comparison", sampler, size)
		}
		for i := range got["cpu"] {
			worst = max(worst, math.Abs(float64(got["cpu"][i])-float64(got["cuda"][i])))
		}
		if len(got["cpu"]) != 48 || !(worst <= 1e-3) {
			t.Errorf("%s: %d values, max abs difference cpu vs cuda %.3g (want ≤ 1e-3)", sampler, len(got["cpu"]), worst)
		}
		t.Logf("%s: max abs difference cpu vs cuda %.3g", sampler, worst)
	}
	// --clip wraps the score of lt: the state goes to the host, and the command says so.
	o, err := runSub(t, sampleCommand(), "--ckpt", run, "--sampler", "lt", "--clip", "1", "--n", "4", "--nfe", "10", "--device", "cuda",
		"--out", filepath.Join(dir, "clip.npy"))
	if err != nil || !strings.Contains(o, "integrates the state on the host: --clip thresholds") {
		t.Errorf("sample --sampler lt --clip 1 --device cuda: %v, want a note on the host integration:\n%s", err, o)
	}
	// nll --device cuda: the network's evaluations and VJPs on the device, the ODE on the host; the
	// bound agrees with the CPU's to the printed digits.
	var lines [2]string
	for i, dev := range []string{"cpu", "cuda"} {
		out, err := runSub(t, nllCommand(), "--ckpt", run, "--n", "4", "--tol", "1e-3", "--device", dev)
		if err != nil {
			t.Fatalf("nll --device %s: %v\n%s", dev, err, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.Contains(l, "nats/dim") {
				lines[i] += l + "\n"
			}
		}
	}
	if lines[0] == "" || lines[0] != lines[1] {
		t.Errorf("nll: cpu\n%s\ncuda\n%s", lines[0], lines[1])
	}
}
