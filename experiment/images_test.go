package experiment

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"holdgo/rng"
)

// TestImageStudy: on a tiny made-up image set (8 images of 4×4 in [−1, 1]) the x̂₀ samplers with the
// empirical oracle reproduce training images (relative nearest-image distance near 0 at NFE 100) and
// hit several of them; nearest agrees with a brute-force search.
func TestImageStudy(t *testing.T) {
	const n, dim = 8, 16
	r := rng.New(4)
	imgs := make([]float64, n*dim)
	for i := range imgs {
		imgs[i] = math.Tanh(r.Normal())
	}
	q := make([]float64, 3*dim)
	for i := range q {
		q[i] = r.Normal()
	}
	norms := make([]float64, n)
	for k := range n {
		for _, v := range imgs[k*dim : (k+1)*dim] {
			norms[k] += v * v
		}
	}
	idx, dist := nearest(q, imgs, dim, norms, nil)
	for i := range 3 {
		best, bestD := -1, math.Inf(1)
		for k := range n {
			var s float64
			for j := range dim {
				d := q[i*dim+j] - imgs[k*dim+j]
				s += d * d
			}
			if s < bestD {
				best, bestD = k, s
			}
		}
		if idx[i] != best || !(math.Abs(dist[i]-math.Sqrt(bestD)) <= 1e-9) {
			t.Errorf("nearest of %d: %d at %g, brute force %d at %g", i, idx[i], dist[i], best, math.Sqrt(bestD))
		}
	}
	tab, err := ImageStudy(ImageStudyConfig{Images: imgs, Dim: dim, Samplers: []string{"hold-xdpm2", "vp-xddim", "hold-lt"},
		NFEs: []int{20, 100}, Samples: 64, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tab.Points {
		t.Logf("%s NFE %d: rel. distance %.4f, entropy %.2f", p.Sampler, p.NFE, p.RelDist, p.Entropy)
		if p.Sampler != "hold-lt" && p.NFE == 100 && !(p.RelDist < 0.05 && p.Entropy > 0.5) {
			t.Errorf("%s NFE %d: relative distance %g, entropy %g", p.Sampler, p.NFE, p.RelDist, p.Entropy)
		}
	}
	var md bytes.Buffer
	if err := tab.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "| hold-xdpm2 |") {
		t.Errorf("markdown (%v):\n%s", err, md.String())
	}
}

// ImageStudyData studies the first n images of a data set, and refuses what is not a data set or
// cannot be opened with a ParamError.
func TestImageStudyData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "imgs.idx")
	writeIDX(t, path, 5, 4)
	tab, err := ImageStudyData("idx:"+path, 3, ImageStudyConfig{Samplers: []string{"vp-xddim"}, NFEs: []int{10}, Samples: 8, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := tab.WriteMarkdown(&md); err != nil || !strings.Contains(md.String(), "vp-xddim") {
		t.Errorf("%v:\n%s", err, md.String())
	}
	var pe *ParamError
	for _, spec := range []string{"gmm1d", "idx:" + path + ".missing"} {
		if _, err := ImageStudyData(spec, 3, ImageStudyConfig{}); !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a ParamError", spec, err)
		}
	}
}
