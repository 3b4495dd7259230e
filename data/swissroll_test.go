package data

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"holdgo/tensor"
)

func nearestCenter(centers [][2]float64, x, y float64) int {
	best, bestD := 0, math.Inf(1)
	for i, c := range centers {
		if d := math.Hypot(x-c[0], y-c[1]); d < bestD {
			best, bestD = i, d
		}
	}
	return best
}

// Without noise every point lies on its roll's spiral r = t, angle = t, with
// t in [1.5π, 4.5π], and the five rolls are equally likely.
func TestSwissRollGeometry(t *testing.T) {
	r := PaperSwissRoll()
	if r.Noise != 0.02 || r.Scale != 0.01 || len(r.Centers) != 5 || r.Dimension() != 2 || r.Name() != NameSwissRoll {
		t.Fatalf("paper swiss roll %+v", r)
	}
	r.Noise = 0
	const n = 10000
	pts := Draw(r, tensor.NewRNG(7), n)
	counts := make([]int, 5)
	for i := 0; i < n; i++ {
		x, y := float64(pts[2*i]), float64(pts[2*i+1])
		k := nearestCenter(r.Centers, x, y)
		counts[k]++
		u, v := (x-r.Centers[k][0])/r.Scale, (y-r.Centers[k][1])/r.Scale
		tt := math.Hypot(u, v)
		if !(tt >= 1.5*math.Pi-1e-3) || !(tt <= 4.5*math.Pi+1e-3) {
			t.Fatalf("point %d: t = %g outside [1.5π, 4.5π]", i, tt)
		}
		// float32 rounding of the centre-relative point: |error| ≲ 1e-7/scale.
		if e := math.Hypot(u-tt*math.Cos(tt), v-tt*math.Sin(tt)); !(e <= 1e-3*tt) {
			t.Fatalf("point %d (%g, %g) off the spiral by %g", i, u, v, e)
		}
	}
	for k, c := range counts {
		if sd := math.Sqrt(n * 0.2 * 0.8); !(math.Abs(float64(c)-n/5) <= 4*sd) {
			t.Errorf("roll %d: %d of %d points", k, c, n)
		}
	}
}

// For t ~ U[1.5π, 4.5π]: E[t cos t] = 2, E[t sin t] = 2/(3π); the noise adds
// Noise²·Scale² to each coordinate's variance.
func TestSwissRollMoments(t *testing.T) {
	r := SwissRoll{Noise: 3, Scale: 0.5, Centers: [][2]float64{{10, -10}}}
	const n = 200000
	pts := Draw(r, tensor.NewRNG(3), n)
	var mx, my, sxx float64
	for i := 0; i < n; i++ {
		mx += float64(pts[2*i])
		my += float64(pts[2*i+1])
	}
	mx, my = mx/n, my/n
	for i := 0; i < n; i++ {
		d := float64(pts[2*i]) - mx
		sxx += d * d
	}
	sxx /= n
	// E[t² cos² t] by the midpoint rule.
	a, b, steps := 1.5*math.Pi, 4.5*math.Pi, 100000
	e2 := 0.0
	for i := 0; i < steps; i++ {
		tt := a + (b-a)*(float64(i)+0.5)/float64(steps)
		c := tt * math.Cos(tt)
		e2 += c * c
	}
	e2 /= float64(steps)
	wantVar := r.Scale * r.Scale * (e2 - 4 + r.Noise*r.Noise)
	wantX, wantY := 10+r.Scale*2, -10+r.Scale*2/(3*math.Pi)
	se := math.Sqrt(wantVar / n)
	if !(math.Abs(mx-wantX) <= 5*se) || !(math.Abs(my-wantY) <= 5*se) {
		t.Errorf("mean (%g, %g), want (%g, %g) ± %g", mx, my, wantX, wantY, se)
	}
	if !(math.Abs(sxx-wantVar) <= 0.02*wantVar) {
		t.Errorf("var x %g, want %g", sxx, wantVar)
	}
}

func TestOpen(t *testing.T) {
	src, err := Open("swissroll", 0.2)
	if err != nil || src.(SwissRoll).Noise != 0.2 {
		t.Errorf("swissroll: %v %v", src, err)
	}
	if _, err := Open("swissroll", -1); err == nil {
		t.Error("negative noise accepted")
	}
	if src, err := Open("gmm1d", 0); err != nil || src.Dimension() != 1 || src.Name() != NameGMM1D {
		t.Errorf("gmm1d: %v %v", src, err)
	}
	if _, err := Open("moons", 0); err == nil || !strings.Contains(err.Error(), "moons") {
		t.Errorf("unknown name: %v", err)
	}
	if src, err := Open("testdata/f4_2d.npy", 0); err != nil || src.Dimension() != 2 {
		t.Errorf("npy: %v %v", src, err)
	}
}

func TestFromNPY(t *testing.T) {
	src, err := FromNPY("testdata/f4_2d.npy")
	if err != nil {
		t.Fatal(err)
	}
	if src.Len() != 3 || src.Dimension() != 2 {
		t.Fatalf("len %d dim %d", src.Len(), src.Dimension())
	}
	const n = 30000
	out := Draw(src, tensor.NewRNG(5), n)
	counts := map[[2]float32]int{}
	for i := 0; i < n; i++ {
		counts[[2]float32{out[2*i], out[2*i+1]}]++
	}
	rows := [][2]float32{{-1, -0.5}, {0, 0.5}, {1, 1.5}}
	for _, r := range rows {
		if c := counts[r]; !(math.Abs(float64(c)-n/3) <= 4*math.Sqrt(n*2.0/9)) {
			t.Errorf("row %v drawn %d times of %d", r, c, n)
		}
	}
	if len(counts) != 3 {
		t.Errorf("drew points not in the file: %v", counts)
	}

	one, err := FromNPY("testdata/f8_1d.npy")
	if err != nil || one.Dimension() != 1 || one.Len() != 4 {
		t.Errorf("1-D file: %v %v", one, err)
	}

	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.npy")
	if err := WriteNPY32(empty, nil, 0, 2); err != nil {
		t.Fatal(err)
	}
	nan := filepath.Join(dir, "nan.npy")
	if err := WriteNPY64(nan, []float64{1, math.NaN()}, 2); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{empty, nan, filepath.Join(dir, "missing.npy"), "testdata/int64.npy"} {
		if _, err := FromNPY(p); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := NewPoints("x", []float32{1, 2, 3}, 2); err == nil {
		t.Error("ragged points accepted")
	}
	if p, _ := NewPoints("x", []float32{4}, 1); !slices.Equal(Draw(p, tensor.NewRNG(0), 3), []float32{4, 4, 4}) {
		t.Error("single point source")
	}
}

// Every point of the paper's rolls is attributed to the roll it was drawn from: draw with the
// same RNG sequence as Sample (roll index first) and compare.
func TestSwissRollRoll(t *testing.T) {
	s := PaperSwissRoll()
	r, twin := tensor.NewRNG(3), tensor.NewRNG(3)
	x := make([]float32, 2)
	for range 5000 {
		want := twin.IntN(len(s.Centers))
		twin.Float64()
		twin.Normal()
		twin.Normal()
		s.Sample(r, x)
		if got := s.Roll(float64(x[0]), float64(x[1])); got != want {
			t.Fatalf("point (%g, %g) of roll %d attributed to roll %d", x[0], x[1], want, got)
		}
	}
}
