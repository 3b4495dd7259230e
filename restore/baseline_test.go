package restore

import (
	"encoding/json"
	"math"
	"os"
	"testing"

	"holdgo/imagedata"
)

const fmnistDir = "/usr/share/datasets/fashion-mnist"

// fmnistImages returns the first n images of a Fashion-MNIST split in [−1, 1], skipping the test when
// Debian's dataset-fashion-mnist is not installed (.ci/run installs it).
func fmnistImages(t *testing.T, split string, n int) []float32 {
	t.Helper()
	if _, err := os.Stat(fmnistDir); err != nil {
		t.Skipf("needs Debian's dataset-fashion-mnist (%s): %v", fmnistDir, err)
	}
	ds, err := imagedata.Open("fashion-mnist:"+fmnistDir+"#"+split, imagedata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := ds.C * ds.H * ds.W
	x := make([]float32, n*d)
	for i := range n {
		ds.Scale(x[i*d:(i+1)*d], ds.Pixels(i), false, nil)
	}
	return x
}

// TestBaselinesMatchNumpy checks mean fill, LMMSE (LinearPosterior with the jitter) and Moments
// against scripts/restore_baselines.py (numpy: np.cov, np.linalg.pinv, np.linalg.solve) on real
// images: the per-image PSNR of 16 test images for the centred box and 4× pooling, prior from the
// first 2,000 training images.
func TestBaselinesMatchNumpy(t *testing.T) {
	raw, err := os.ReadFile("testdata/baselines_fmnist.json")
	if err != nil {
		t.Fatal(err)
	}
	var golden struct {
		NTrain, NTest int
		Jitter, Ridge float64
		Tasks         map[string]struct {
			MeanFill []float64 `json:"mean_fill_psnr"`
			LMMSE    []float64 `json:"lmmse_psnr"`
		}
	}
	if err := json.Unmarshal(raw, &golden); err != nil {
		t.Fatal(err)
	}
	// The pixels are float32 here (k/127.5 − 1 rounded, relative 6e-8) and float64 in numpy: PSNRs
	// agree to about 3e-7 dB. A 0.1 % error in the mean, the covariance or the gain moves them by
	// 1e-3 dB or more.
	const d, psnrTol = 784, 2e-6
	train := fmnistImages(t, "train", golden.NTrain)
	test := fmnistImages(t, "test", golden.NTest)
	mean, cov, err := Moments(train, golden.NTrain, d, golden.Ridge)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range golden.Tasks {
		task := Task{Name: name, C: 1, H: 28, W: 28, Box: 14, BoxPos: BoxCenter}
		if err := task.Check(); err != nil {
			t.Fatal(err)
		}
		op, err := task.Operator(1, 0)
		if err != nil {
			t.Fatal(err)
		}
		post, err := NewLinearPosterior(mean, cov, op, 0, golden.Jitter)
		if err != nil {
			t.Fatal(err)
		}
		truth, x, y := make([]float64, d), make([]float64, d), make([]float64, op.Rows())
		for i := range golden.NTest {
			for j, v := range test[i*d : (i+1)*d] {
				truth[j] = float64(v)
			}
			op.Apply(y, truth)
			MeanFill(x, op, y, mean)
			if got := PSNR(x, truth); !(math.Abs(got-want.MeanFill[i]) <= psnrTol) {
				t.Errorf("%s image %d: mean fill PSNR %.12f, numpy %.12f", name, i, got, want.MeanFill[i])
			}
			post.PosteriorMean(x, y)
			if got := PSNR(x, truth); !(math.Abs(got-want.LMMSE[i]) <= psnrTol) {
				t.Errorf("%s image %d: LMMSE PSNR %.12f, numpy %.12f", name, i, got, want.LMMSE[i])
			}
		}
	}
}
