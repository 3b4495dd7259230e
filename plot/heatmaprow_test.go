package plot

import (
	"image"
	"image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestHeatmapRow: panels drawn side by side, top-aligned, in one PNG as wide as the panels together;
// a panel that Heatmap draws alone has the same pixels as its place in the row.
func TestHeatmapRow(t *testing.T) {
	g := Grid{T: []float64{0.25, 0.75}, X: []float64{-0.5, 0.5}, Z: []float64{1, 2, 3, 4}}
	panels := []HeatPanel{
		{Grid: g, Opt: HeatmapOptions{Title: "a", Width: 120, Height: 100}},
		{Grid: g, Paths: []Path{{T: []float64{0.2, 0.8}, X: []float64{-0.4, 0.4}}}, Opt: HeatmapOptions{Title: "b", Width: 90, Height: 140}},
	}
	dir := t.TempDir()
	row, one := filepath.Join(dir, "row.png"), filepath.Join(dir, "one.png")
	if err := HeatmapRow(row, panels); err != nil {
		t.Fatal(err)
	}
	if err := Heatmap(one, panels[1].Grid, panels[1].Paths, panels[1].Opt); err != nil {
		t.Fatal(err)
	}
	read := func(p string) image.Image {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		m, err := png.Decode(f)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	r, o := read(row), read(one)
	if b := r.Bounds(); b.Dx() != 210 || b.Dy() != 140 {
		t.Fatalf("row of 120×100 and 90×140 panels is %d×%d, want 210×140", b.Dx(), b.Dy())
	}
	for y := range 140 {
		for x := range 90 {
			if r.At(120+x, y) != o.At(x, y) {
				t.Fatalf("pixel (%d, %d) of the second panel differs from Heatmap's", x, y)
			}
		}
	}
}
