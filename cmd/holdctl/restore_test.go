package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"holdgo/data"
	"holdgo/imagedata"
	"holdgo/restore"
)

// The shipped HOLD-3 model and the first 500 Fashion-MNIST test images.
const (
	restoreModel  = "../../models/fmnist-hold3"
	restoreImages = "idx:../../models/testdata/fmnist-t10k-500-images-idx3-ubyte.gz"
)

// restoreJSON is the part of holdctl restore --json the tests read.
type restoreJSON struct {
	N             int      `json:"n"`
	K             int      `json:"samples_per_image"`
	PSNR          float64  `json:"psnr"`
	SSIM          float64  `json:"ssim"`
	PSNRDegraded  float64  `json:"psnr_degraded"`
	RMSResidual   float64  `json:"rms_residual"`
	RMSMax        float64  `json:"rms_residual_max"`
	SigmaY        float64  `json:"sigma_y"`
	NFE           int      `json:"nfe"`
	VJP           int      `json:"vjp"`
	MaxAbsPreclip float64  `json:"max_abs_preclip"`
	FDist         *float64 `json:"fdist"`
	Agreement     *float64 `json:"class_agreement"`
	ClassRef      string   `json:"class_reference"`
	Method        struct {
		Name       string `json:"name"`
		Sampler    string `json:"sampler"`
		Steps      int    `json:"steps"`
		ExactStart bool   `json:"exact_start"`
	} `json:"method"`
}

func runRestoreJSON(t *testing.T, args ...string) restoreJSON {
	t.Helper()
	r := mustRun(t, append([]string{"restore", "--ckpt", restoreModel, "--in", restoreImages, "--threads", "1", "--json"}, args...)...)
	var rep restoreJSON
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("restore --json: %v\n%s", err, r.stdout)
	}
	return rep
}

// restoreTruth returns the first n test images in [−1, 1] as training scales them.
func restoreTruth(t *testing.T, n int) [][]float64 {
	t.Helper()
	ds, err := imagedata.Open(restoreImages, imagedata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, n)
	img := make([]float32, ds.Dimension())
	for i := range out {
		ds.Scale(img, ds.Pixels(i), false, nil)
		out[i] = make([]float64, len(img))
		for j, v := range img {
			out[i][j] = float64(v)
		}
	}
	return out
}

// meanFillPSNR is the mean-fill baseline of inpainting: the known pixels, the missing ones set to the
// per-pixel mean of all 500 test images.
func meanFillPSNR(t *testing.T, op restore.Operator, truth [][]float64) float64 {
	t.Helper()
	all := restoreTruth(t, 500)
	mean := make([]float64, len(all[0]))
	for _, img := range all {
		for j, v := range img {
			mean[j] += v / float64(len(all))
		}
	}
	y := make([]float64, op.Rows())
	var sum float64
	for _, q := range truth {
		fill := append([]float64(nil), mean...)
		op.Apply(y, q)
		for j, k := range op.(*restore.Mask).Known {
			fill[k] = y[j]
		}
		sum += restore.PSNR(fill, q)
	}
	return sum / float64(len(truth))
}

// TestRestoreInpaintBox: DDNM+ on the centred 14×14 box of 6 test images at NFE 10 writes (6, 784)
// values in [−1, 1] that keep every known pixel (to 1e-6, read from the file), reports RMS(Ax − y) ≤ 1e-6
// and the PSNR the file gives, beats the mean-fill baseline, draws the grid (degraded | 1 | truth), and
// with --features reports the classifier's feature distance and class agreement.
func TestRestoreInpaintBox(t *testing.T) {
	dir := t.TempDir()
	npy, pic := filepath.Join(dir, "restored.npy"), filepath.Join(dir, "grid.png")
	const n, nfe = 6, 10
	rep := runRestoreJSON(t, "--task", "inpaint-box", "--method", "ddnm", "--nfe", "10", "--n", "6", "--out", npy, "--out", pic,
		"--features", "../../models/fmnist-classifier.safetensors")
	if rep.NFE != nfe || rep.VJP != 0 || rep.Method.Sampler != "a-ddnm" || rep.Method.Steps != nfe-1 {
		t.Errorf("NFE %d, VJPs %d, sampler %s, %d steps; want NFE %d, no VJP, a-ddnm, %d steps", rep.NFE, rep.VJP, rep.Method.Sampler, rep.Method.Steps, nfe, nfe-1)
	}
	if !(rep.RMSMax <= 1e-6) || rep.SigmaY != 0 {
		t.Errorf("RMS(Ax − y) up to %g at σ_y = %g, want ≤ 1e-6", rep.RMSMax, rep.SigmaY)
	}
	a, shape := readNPYShape(t, npy)
	if !slices.Equal(shape, []int{n, 784}) {
		t.Fatalf("restored.npy has shape %v, want (%d, 784)", shape, n)
	}
	truth := restoreTruth(t, n)
	op, err := restore.Task{Name: restore.TaskInpaintBox, C: 1, H: 28, W: 28, Box: 14, BoxPos: restore.BoxCenter}.Operator(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var psnr, worst float64
	for i, q := range truth {
		x := a.Data[i*784 : (i+1)*784]
		for _, v := range x {
			if !(math.Abs(v) <= 1) {
				t.Fatalf("image %d: value %v outside [−1, 1]", i, v)
			}
		}
		for _, k := range op.(*restore.Mask).Known {
			worst = math.Max(worst, math.Abs(x[k]-q[k]))
		}
		psnr += restore.PSNR(x, q) / n
	}
	if !(worst <= 1e-6) {
		t.Errorf("a known pixel moved by %g", worst)
	}
	if !(math.Abs(psnr-rep.PSNR) <= 1e-9) {
		t.Errorf("the file's PSNR is %.6f dB, the report says %.6f", psnr, rep.PSNR)
	}
	base := meanFillPSNR(t, op, truth)
	if !(rep.PSNR > base) {
		t.Errorf("PSNR %.2f dB is not above the mean-fill baseline %.2f", rep.PSNR, base)
	}
	t.Logf("inpaint-box ddnm NFE %d, %d images: PSNR %.2f dB (mean fill %.2f, gray fill %.2f), SSIM %.3f", nfe, n, rep.PSNR, base, rep.PSNRDegraded, rep.SSIM)
	if rep.FDist == nil || rep.Agreement == nil || !(*rep.FDist >= 0 && *rep.FDist <= 4) || !(*rep.Agreement >= 0 && *rep.Agreement <= 1) ||
		!strings.Contains(rep.ClassRef, "no labels") {
		t.Errorf("--features: feature distance %v, class agreement %v against %q; want values in [0, 4] and [0, 1] against the truth's class (idx: no labels)",
			rep.FDist, rep.Agreement, rep.ClassRef)
	}
	w, h := pngSize(t, pic)
	if tile := 2*28 + 2; w != 2+3*tile || h != 2+n*tile {
		t.Errorf("grid %d×%d, want %d×%d (3 columns, %d rows)", w, h, 2+3*tile, 2+n*tile, n)
	}
}

// TestRestoreDenoise: denoising at σ_y 0.2 starts exactly at σ = σ_y (method none, no VJP), beats y
// itself, and its outputs lie about σ_y from y.
func TestRestoreDenoise(t *testing.T) {
	npy := filepath.Join(t.TempDir(), "d.npy")
	rep := runRestoreJSON(t, "--task", "denoise", "--noise", "0.2", "--nfe", "8", "--n", "4", "--out", npy)
	if rep.Method.Name != restore.MethodNone || !rep.Method.ExactStart || rep.Method.Sampler != "a-sde2" || rep.NFE != 8 {
		t.Errorf("method %s (exact start %v), sampler %s, NFE %d; want none from the exact start, a-sde2, NFE 8",
			rep.Method.Name, rep.Method.ExactStart, rep.Method.Sampler, rep.NFE)
	}
	if !(rep.PSNR > rep.PSNRDegraded) {
		t.Errorf("PSNR %.2f dB is not above the noisy images' %.2f", rep.PSNR, rep.PSNRDegraded)
	}
	if !(rep.RMSResidual > 0.5*0.2 && rep.RMSResidual < 1.5*0.2) {
		t.Errorf("RMS(x − y) %.3f, want about σ_y = 0.2", rep.RMSResidual)
	}
	t.Logf("denoise σ_y 0.2, NFE 8: PSNR %.2f dB (y: %.2f), SSIM %.3f, RMS(x − y) %.3f", rep.PSNR, rep.PSNRDegraded, rep.SSIM, rep.RMSResidual)
}

// TestRestoreImageKeyed: an image's mask, measurement and noise depend on its index, not on --first,
// --n, --threads or the batch, and every forward pass holds the same number of samples
// (NetworkScorer.PadBatch): image 2 restored among images 0…4 (two samples each, one thread) is
// bit-identical to image 2 restored alone on two threads, for a method without VJPs (replace) and one
// with (dps).
func TestRestoreImageKeyed(t *testing.T) {
	for _, method := range []string{"replace", "dps"} {
		dir := t.TempDir()
		all, one := filepath.Join(dir, "all.npy"), filepath.Join(dir, "one.npy")
		common := []string{"restore", "--ckpt", restoreModel, "--in", restoreImages, "--task", "inpaint-random",
			"--noise", "0.05", "--method", method, "--nfe", "5", "--samples-per-image", "2"}
		mustRun(t, append(common, "--n", "5", "--threads", "1", "--out", all)...)
		mustRun(t, append(common, "--first", "2", "--n", "1", "--threads", "2", "--out", one)...)
		a, _ := readNPYShape(t, all)
		b, _ := readNPYShape(t, one)
		for i, v := range b.Data {
			if v != a.Data[2*2*784+i] {
				t.Fatalf("%s: image 2's restorations differ at value %d when restored alone: %v, %v among five", method, i, v, a.Data[2*2*784+i])
			}
		}
	}
}

// TestRestoreBadInput: every bad input exits 2 with one line and creates no file.
func TestRestoreBadInput(t *testing.T) {
	dir := t.TempDir()
	writeNPY := func(name string, rows, cols int, v float32) string {
		p := filepath.Join(dir, name)
		x := make([]float32, rows*cols)
		for i := range x {
			x[i] = v
		}
		if err := data.WriteNPY32(p, x, rows, cols); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := writeNPY("small.npy", 3, 100, 0)
	bright := writeNPY("bright.npy", 3, 784, 1.5)
	good := writeNPY("good.npy", 3, 784, 0.25)
	goodBytes, _ := os.ReadFile(good)
	out := filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(out, "r.npy")
	ddnm := []string{"--task", "inpaint-box", "--method", "ddnm"}
	cases := []struct {
		name string
		args []string
	}{
		{"box outside the image", []string{"--task", "inpaint-box", "--box", "29"}},
		{"box the whole image", []string{"--task", "inpaint-box", "--box", "28"}},
		{"box position", []string{"--task", "inpaint-box", "--box-pos", "left"}},
		{"drop 0", []string{"--task", "inpaint-random", "--drop", "0"}},
		{"drop 1", []string{"--task", "inpaint-random", "--drop", "1"}},
		{"drop 1.5", []string{"--task", "inpaint-random", "--drop", "1.5"}},
		{"negative noise", []string{"--task", "inpaint-box", "--noise", "-0.1"}},
		{"NaN noise", []string{"--task", "inpaint-box", "--noise", "NaN"}},
		{"deblur without noise", []string{"--task", "deblur-gauss", "--noise", "0"}},
		{"denoise without noise", []string{"--task", "denoise"}},
		{"unknown task", []string{"--task", "colorize"}},
		{"wrong image size", append(ddnm, "--in", small)},
		{"wrong range", append(ddnm, "--in", bright)},
		{"not images", append(ddnm, "--in", filepath.Join(dir, "x.txt"))},
		{"past the data", append(ddnm, "--first", "499", "--n", "2")},
		{"ddnm with a-anc", append(ddnm, "--sampler", "a-anc")},
		{"repaint with a-sde2", []string{"--task", "inpaint-box", "--method", "repaint", "--sampler", "a-sde2"}},
		{"replace on sr4", []string{"--task", "sr4", "--method", "replace"}},
		{"pigdm with a-ddnm", []string{"--task", "inpaint-box", "--method", "pigdm", "--sampler", "a-ddnm"}},
		{"exact without an oracle", []string{"--task", "inpaint-box", "--method", "exact"}},
		{"none on inpainting", []string{"--task", "inpaint-box", "--method", "none"}},
		{"unknown method", []string{"--task", "inpaint-box", "--method", "ddrm"}},
		{"t-grid", append(ddnm, "--grid", "quadratic")},
		{"one NFE", append(ddnm, "--nfe", "1")},
		{"repaint NFE below r", []string{"--task", "inpaint-box", "--method", "repaint", "--resample", "4", "--nfe", "4"}},
		{"n 0", append(ddnm, "--n", "0")},
		{"K 0", append(ddnm, "--samples-per-image", "0")},
		{"eta 2", append(ddnm, "--eta", "2")},
		{"dps scale 0", []string{"--task", "inpaint-box", "--method", "dps", "--dps-scale", "0"}},
		{"output kind", append(ddnm, "--out", filepath.Join(out, "r.txt"))},
		{"output onto the input", append(ddnm, "--in", good, "--out", good)},
		{"no checkpoint", append(ddnm, "--ckpt", filepath.Join(dir, "missing"))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"restore", "--ckpt", restoreModel, "--in", restoreImages, "--n", "2", "--nfe", "3", "--threads", "1", "--out", res}
			r := holdctl(t, append(args, tc.args...)...)
			msg := strings.TrimSpace(r.stderr)
			if r.code != 2 || msg == "" || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "holdctl") {
				t.Errorf("want exit 2 and one line; got %s", r)
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("it wrote %s", entries[0].Name())
			}
			if b, _ := os.ReadFile(good); !slices.Equal(b, goodBytes) {
				t.Error("it changed the input")
			}
		})
	}
}
