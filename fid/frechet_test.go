package fid

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// splitmix64 is the counter-based generator of scripts/fid_ref.py: output
// for counter i (1-based) of the stream seeded with seed.
func splitmix64(seed, i uint64) uint64 {
	z := seed + i*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// refFeatures rebuilds the script's n×d feature set number which.
func refFeatures(n, d, which int) []float32 {
	u := make([]float64, n*d)
	for k := range u {
		u[k] = 2*(float64(splitmix64(uint64(1000*which+d), uint64(k+1))>>11)*0x1p-53) - 1
	}
	out := make([]float32, n*d)
	for i := range n {
		for j := range d {
			v := u[i*d+j] + 0.5*float64(j%7)/7*u[i*d+(j+1)%d] + 0.1*float64(which)*math.Sin(float64(j))
			out[i*d+j] = float32(v)
		}
	}
	return out
}

type refFile struct {
	Cases []struct {
		N, D         int
		FD, KID      float64
		FirstFeature float64 `json:"first_feature"`
		LastFeatureB float64 `json:"last_feature_b"`
		MuA0         float64 `json:"mu_a_0"`
		SigmaA01     float64 `json:"sigma_a_01"`
	}
	StatsFD  float64 `json:"stats_fd"`
	StatsDim int     `json:"stats_dim"`
}

func loadRef(t *testing.T) refFile {
	t.Helper()
	b, err := os.ReadFile("../testdata/golden/fid_ref.json")
	if err != nil {
		t.Fatal(err)
	}
	var r refFile
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	if len(r.Cases) != 2 {
		t.Fatalf("fid_ref.json has %d cases, want 2 (d = 64 and 2048)", len(r.Cases))
	}
	return r
}

func relErr(got, want float64) float64 { return math.Abs(got-want) / math.Abs(want) }

// TestFrechetKIDAgainstScipy compares FD and KID on the script's random
// feature sets (n = 500, d = 64 and 2048) with pytorch-fid's scipy sqrtm
// formula and clean-fid's numpy KID.
func TestFrechetKIDAgainstScipy(t *testing.T) {
	ref := loadRef(t)
	for _, c := range ref.Cases {
		if testing.Short() && c.D > 64 {
			continue // d = 2048 takes a few seconds of eigendecomposition
		}
		a, b := refFeatures(c.N, c.D, 0), refFeatures(c.N, c.D, 1)
		if a[0] != float32(c.FirstFeature) || b[len(b)-1] != float32(c.LastFeatureB) {
			t.Fatalf("d=%d: generator differs from the script: %v/%v vs %v/%v", c.D, a[0], b[len(b)-1], c.FirstFeature, c.LastFeatureB)
		}
		sa, err := ComputeStats(a, c.D)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := ComputeStats(b, c.D)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(sa.Mu[0], c.MuA0); !(e <= 1e-12) {
			t.Errorf("d=%d: mu[0] %v, numpy %v", c.D, sa.Mu[0], c.MuA0)
		}
		if e := relErr(sa.Sigma[1], c.SigmaA01); !(e <= 1e-10) {
			t.Errorf("d=%d: sigma[0,1] %v, numpy.cov %v", c.D, sa.Sigma[1], c.SigmaA01)
		}
		fd, err := FrechetDistance(sa, sb)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(fd, c.FD); !(e <= 1e-6) {
			t.Errorf("d=%d: FD %.12g, scipy %.12g (rel. error %.2g > 1e-6)", c.D, fd, c.FD, e)
		} else {
			t.Logf("d=%d: FD %.12g, scipy %.12g (rel. error %.2g)", c.D, fd, c.FD, e)
		}
		kid, se, err := KID(a, b, c.D, DefaultKID)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(kid, c.KID); !(e <= 1e-6) || se != 0 {
			t.Errorf("d=%d: KID %.12g ± %g, clean-fid formula %.12g (rel. error %.2g > 1e-6, or se ≠ 0 with every subset the whole set)", c.D, kid, se, c.KID, e)
		} else {
			t.Logf("d=%d: KID %.12g, clean-fid formula %.12g (rel. error %.2g)", c.D, kid, c.KID, e)
		}
	}
}

// TestFrechetClosedForm checks FD of diagonal Gaussians against
// Σ (√a − √b)² + ‖Δμ‖², and FD(x, x) = 0 for a rank-deficient covariance.
func TestFrechetClosedForm(t *testing.T) {
	d := 5
	a := &Stats{Dim: d, Mu: make([]float64, d), Sigma: make([]float64, d*d)}
	b := &Stats{Dim: d, Mu: make([]float64, d), Sigma: make([]float64, d*d)}
	var want float64
	for i := range d {
		va, vb := float64(i+1), 0.5*float64(i*i)+0.25
		a.Sigma[i*d+i], b.Sigma[i*d+i] = va, vb
		a.Mu[i], b.Mu[i] = float64(i), -float64(i)/2
		want += math.Pow(math.Sqrt(va)-math.Sqrt(vb), 2) + math.Pow(1.5*float64(i), 2)
	}
	got, err := FrechetDistance(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if !(relErr(got, want) <= 1e-12) {
		t.Errorf("diagonal FD %.15g, closed form %.15g", got, want)
	}
	// Rank-deficient: 3 points in 5 dimensions.
	x := refFeatures(3, d, 0)
	s, err := ComputeStats(x, d)
	if err != nil {
		t.Fatal(err)
	}
	self, err := FrechetDistance(s, s)
	if err != nil {
		t.Fatal(err)
	}
	if !(math.Abs(self) <= 1e-9) {
		t.Errorf("FD of rank-deficient statistics with themselves %g, want 0", self)
	}
}

// TestKIDSubsets checks the subset sampling: with more points than the
// subset size, subsets differ (a standard error > 0) and the mean stays
// near the full-set value; the same seed repeats the result.
func TestKIDSubsets(t *testing.T) {
	d := 16
	a, b := refFeatures(300, d, 0), refFeatures(300, d, 1)
	full, _, err := KID(a, b, d, KIDOptions{Subsets: 1, SubsetSize: 300})
	if err != nil {
		t.Fatal(err)
	}
	opt := KIDOptions{Subsets: 50, SubsetSize: 100, Seed: 3}
	mean, se, err := KID(a, b, d, opt)
	if err != nil {
		t.Fatal(err)
	}
	if se <= 0 || !(math.Abs(mean-full) <= 4*se+1e-12) {
		t.Errorf("subset KID %g ± %g, full-set %g", mean, se, full)
	}
	again, _, _ := KID(a, b, d, opt)
	if again != mean {
		t.Errorf("same seed gave %g then %g", mean, again)
	}
	if _, _, err := KID(a[:d], b, d, opt); err == nil {
		t.Error("KID of one point: no error")
	}
}

// TestStatsFiles reads the two pytorch-fid statistics files the script
// wrote (numpy.savez and savez_compressed) and compares their FD with
// scipy's; SaveStats then LoadStats round-trips exactly.
func TestStatsFiles(t *testing.T) {
	ref := loadRef(t)
	a, err := LoadStats("../testdata/golden/stats_a.npz")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadStats("../testdata/golden/stats_b.npz")
	if err != nil {
		t.Fatal(err)
	}
	if a.Dim != ref.StatsDim {
		t.Fatalf("dimension %d, want %d", a.Dim, ref.StatsDim)
	}
	fd, err := FrechetDistance(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if e := relErr(fd, ref.StatsFD); !(e <= 1e-6) {
		t.Errorf("FD of the stats files %.12g, scipy %.12g", fd, ref.StatsFD)
	}
	path := filepath.Join(t.TempDir(), "s.npz")
	if err := SaveStats(path, a); err != nil {
		t.Fatal(err)
	}
	back, err := LoadStats(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a.Sigma {
		if back.Sigma[i] != a.Sigma[i] {
			t.Fatalf("sigma[%d] %v after the round trip, was %v", i, back.Sigma[i], a.Sigma[i])
		}
	}
	if _, err := LoadStats("../testdata/golden/fid_ref.json"); err == nil {
		t.Error("a JSON file loaded as statistics")
	}
}
