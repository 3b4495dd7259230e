package plot

import (
	"flag"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"holdgo/data"
	"holdgo/tensor"
)

var keep = flag.String("keep", "", "directory to keep the rendered PNGs in, to look at them")

func outPath(t *testing.T, name string) string {
	if *keep != "" {
		return filepath.Join(*keep, name)
	}
	return filepath.Join(t.TempDir(), name)
}

func decode(t *testing.T, path string, w, h int) image.Image {
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
	if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
		t.Fatalf("%s: %d×%d pixels, want %d×%d", path, b.Dx(), b.Dy(), w, h)
	}
	return img
}

// colorBox returns the bounding box of the pixels close to col.
func colorBox(img image.Image, col color.Color) (box image.Rectangle, n int) {
	r0, g0, b0, _ := col.RGBA()
	b := img.Bounds()
	box = image.Rectangle{Min: b.Max, Max: b.Min}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			d := math.Abs(float64(r)-float64(r0)) + math.Abs(float64(g)-float64(g0)) + math.Abs(float64(bl)-float64(b0))
			if d < 3*0x1000 {
				n++
				box.Min.X, box.Min.Y = min(box.Min.X, x), min(box.Min.Y, y)
				box.Max.X, box.Max.Y = max(box.Max.X, x+1), max(box.Max.Y, y+1)
			}
		}
	}
	return box, n
}

var red = color.RGBA{R: 255, A: 255}

// circle returns n points on the circle of radius r around (cx, cy).
func circle(n int, cx, cy, rx, ry float64) []float32 {
	out := make([]float32, 0, 2*n)
	for i := range n {
		s, c := math.Sincos(2 * math.Pi * float64(i) / float64(n))
		out = append(out, float32(cx+rx*c), float32(cy+ry*s))
	}
	return out
}

// A circle comes out round on a canvas that is not square, and an ellipse
// four times as wide as high keeps that ratio: one unit is the same length
// on both axes.
func TestScatterEqualAspect(t *testing.T) {
	for _, c := range []struct {
		name   string
		rx, ry float64
		w, h   int
	}{
		{"circle.png", 1, 1, 700, 450},
		{"ellipse.png", 4, 1, 500, 500},
	} {
		p := outPath(t, c.name)
		err := Scatter(p, circle(2000, 3, -2, c.rx, c.ry), ScatterOptions{Title: c.name, Width: c.w, Height: c.h, Color: red})
		if err != nil {
			t.Fatal(err)
		}
		box, n := colorBox(decode(t, p, c.w, c.h), red)
		if n == 0 {
			t.Fatalf("%s: no red pixels", c.name)
		}
		ratio := float64(box.Dx()) / float64(box.Dy())
		if want := c.rx / c.ry; !(math.Abs(ratio-want) <= 0.04*want) {
			t.Errorf("%s: drawn %d×%d pixels, ratio %.3f, want %.3f", c.name, box.Dx(), box.Dy(), ratio, want)
		}
	}
}

func TestScatterSwissRollAndErrors(t *testing.T) {
	pts := data.Draw(data.PaperSwissRoll(), tensor.NewRNG(1), 5000)
	pts = append(pts, float32(math.NaN()), 0) // left out, not an error
	p := outPath(t, "swissroll.png")
	if err := Scatter(p, pts, ScatterOptions{Title: "multi Swiss roll"}); err != nil {
		t.Fatal(err)
	}
	decode(t, p, 600, 600)
	dir := t.TempDir()
	if err := Scatter(filepath.Join(dir, "x.png"), []float32{1, 2, 3}, ScatterOptions{}); err == nil {
		t.Error("odd number of values accepted")
	}
	if err := Scatter(filepath.Join(dir, "missing", "x.png"), pts, ScatterOptions{}); err == nil {
		t.Error("write into a missing directory succeeded")
	}
	if err := Scatter(filepath.Join(dir, "x.png"), pts, ScatterOptions{Width: 5}); err == nil {
		t.Error("5-pixel plot accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left behind: %v", entries)
	}
}

// Six panels of samples shrinking from noise onto the rolls, as along a
// generation path; in three columns they make two rows.
func TestScatterGrid(t *testing.T) {
	rng := tensor.NewRNG(2)
	roll := data.Draw(data.PaperSwissRoll(), rng, 3000)
	noise := make([]float32, len(roll))
	rng.FillNormal(noise, 0, 1)
	var panels []Panel
	for k := range 6 {
		a := float32(k) / 5
		xy := make([]float32, len(roll))
		for i := range xy {
			xy[i] = a*roll[i] + (1-a)*noise[i]
		}
		panels = append(panels, Panel{Title: "t = " + string(rune('0'+5-k)) + "/5", XY: xy})
	}
	p := outPath(t, "grid.png")
	if err := ScatterGrid(p, panels, GridOptions{Title: "samples along the path"}); err != nil {
		t.Fatal(err)
	}
	decode(t, p, 6*300, 300+36)
	p = outPath(t, "grid2x3.png")
	if err := ScatterGrid(p, panels[:5], GridOptions{Cols: 3, PanelSize: 200, SharedBounds: true}); err != nil {
		t.Fatal(err)
	}
	decode(t, p, 600, 400)
	if err := ScatterGrid(p, nil, GridOptions{}); err == nil {
		t.Error("empty grid accepted")
	}
}

func TestHistogram(t *testing.T) {
	m := data.PaperMixture()
	x := data.Draw(m, tensor.NewRNG(3), 20000)
	p := outPath(t, "hist.png")
	if err := Histogram(p, x, HistogramOptions{Title: "1-D mixture", Bins: 200, Density: m.PDF, XLabel: "x"}); err != nil {
		t.Fatal(err)
	}
	img := decode(t, p, 800, 500)
	if _, n := colorBox(img, densityColor); n < 200 {
		t.Errorf("density curve: %d pixels", n)
	}
	if _, n := colorBox(img, defaultPointColor); n < 2000 {
		t.Errorf("bars: %d pixels", n)
	}
	p = outPath(t, "hist-range.png")
	if err := Histogram(p, []float32{1, 1, 1}, HistogramOptions{Width: 300, Height: 200}); err != nil {
		t.Fatal(err)
	}
	decode(t, p, 300, 200)
	if err := Histogram(p, []float32{float32(math.NaN())}, HistogramOptions{}); err == nil {
		t.Error("no finite samples accepted")
	}
}

// DensityGrid's columns are histograms that integrate to one; the heat
// map puts high values at the top where the grid is high there, and draws
// the paths in their colour.
func TestDensityGridAndHeatmap(t *testing.T) {
	g, err := DensityGrid([]float64{0, 1}, [][]float32{{0.1, 0.2, 0.3, 0.9}, {-5}}, 0, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	// Counts 2, 1, 0, 1 in bins 0.25 wide, divided by 4 samples · 0.25.
	want := []float64{2, 1, 0, 1}
	for j, w := range want {
		if g.Z[j] != w {
			t.Errorf("column 0 bin %d = %g, want %g", j, g.Z[j], w)
		}
	}
	if g.Z[4] != 0 || g.X[0] != 0.125 {
		t.Errorf("second column %v, centres %v", g.Z[4:], g.X)
	}

	// Marginal density over time of samples moving from N(0, 1) to the
	// mixture along straight lines, with a few of the lines drawn.
	m := data.PaperMixture()
	rng := tensor.NewRNG(4)
	const n, steps = 4000, 60
	start, end := make([]float32, n), data.Draw(m, rng, n)
	rng.FillNormal(start, 0, 1)
	times := make([]float64, steps)
	snaps := make([][]float32, steps)
	for i := range steps {
		a := float64(i) / (steps - 1)
		times[i] = a
		snaps[i] = make([]float32, n)
		for k := range n {
			snaps[i][k] = float32((1-a)*float64(start[k]) + a*float64(end[k]))
		}
	}
	g, err = DensityGrid(times, snaps, -2.5, 2.5, 200)
	if err != nil {
		t.Fatal(err)
	}
	green := color.RGBA{G: 255, A: 255}
	var paths []Path
	for k := range 8 {
		pt := Path{T: times, X: make([]float64, steps)}
		for i := range steps {
			pt.X[i] = float64(snaps[i][k])
		}
		paths = append(paths, pt)
	}
	p := outPath(t, "heatmap.png")
	err = Heatmap(p, g, paths, HeatmapOptions{Title: "marginal density and paths", Log: true, LineColor: green, LineWidth: 1})
	if err != nil {
		t.Fatal(err)
	}
	img := decode(t, p, 900, 500)
	if _, n := colorBox(img, green); n < 100 {
		t.Errorf("paths: %d green pixels", n)
	}

	// A step in x: bright above x = 0, black below.
	step := Grid{T: []float64{0, 1, 2}, X: []float64{-1, 1}, Z: []float64{0, 1, 0, 1, 0, 1}}
	p = outPath(t, "step.png")
	if err := Heatmap(p, step, nil, HeatmapOptions{Width: 400, Height: 400}); err != nil {
		t.Fatal(err)
	}
	img = decode(t, p, 400, 400)
	lum := func(x, y int) uint32 { r, g, b, _ := img.At(x, y).RGBA(); return r + g + b }
	if top, bottom := lum(220, 130), lum(220, 300); !(top > 3*0xc000 && top < 3*0xf800 && bottom < 3*0x1000) {
		t.Errorf("step: luminance %d above, %d below", top, bottom)
	}
	if err := Heatmap(p, Grid{T: []float64{0, 1}, X: []float64{0, 2, 3}, Z: make([]float64, 6)}, nil, HeatmapOptions{}); err == nil {
		t.Error("unevenly spaced grid accepted")
	}
	if err := Heatmap(p, Grid{T: []float64{0, 1}, X: []float64{0, 1}, Z: make([]float64, 3)}, nil, HeatmapOptions{}); err == nil {
		t.Error("short grid accepted")
	}
}
