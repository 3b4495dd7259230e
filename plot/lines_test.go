package plot

import (
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogLogWritesPNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nfe.png")
	series := []Series{
		{Name: "a", X: []float64{10, 20, 50}, Y: []float64{0.1, 0.03, 0.005}},
		{Name: "b", X: []float64{10, 20, 50}, Y: []float64{0.2, math.NaN(), 0.01}}, // the NaN is left out
	}
	if err := LogLog(path, series, LogLogOptions{Title: "t", Width: 400, Height: 300}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 400 || b.Dy() != 300 {
		t.Errorf("image %v, want 400×300", b)
	}
}

func TestLogLogRejects(t *testing.T) {
	dir := t.TempDir()
	for name, series := range map[string][]Series{
		"no series":         nil,
		"lengths differ":    {{Name: "a", X: []float64{1, 2}, Y: []float64{1}}},
		"no positive point": {{Name: "a", X: []float64{1, 2}, Y: []float64{0, -1}}},
		"y near max":        {{Name: "a", X: []float64{1, 2}, Y: []float64{1.7e308, 1}}},
		"x subnormal":       {{Name: "a", X: []float64{4e-310, 2}, Y: []float64{1, 1}}},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".png")
		err := LogLog(path, series, LogLogOptions{})
		if err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(name, "max") || strings.Contains(name, "subnormal") {
			if !errors.Is(err, ErrBadValue) {
				t.Errorf("%s: %v is not ErrBadValue", name, err)
			}
		}
		if _, err := os.Stat(path); err == nil {
			t.Errorf("%s: a file was written", name)
		}
	}
}

// A single point (an empty range) still gets a positive log axis.
func TestLogLogSinglePoint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.png")
	if err := LogLog(path, []Series{{Name: "a", X: []float64{20}, Y: []float64{0.06}}}, LogLogOptions{}); err != nil {
		t.Fatal(err)
	}
}

// TestLogTicksNarrowAxis: an axis spanning less than a decade gets labelled ticks at m·10^k (gonum's
// LogTicks labels none there); a wider one keeps LogTicks' powers of ten.
func TestLogTicksNarrowAxis(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(560, 990) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "600 700 800 900" {
		t.Errorf("ticks of [560, 990] labelled %q, want \"600 700 800 900\"", got)
	}
	labels = labels[:0]
	for _, tk := range (logTicks{}).Ticks(2, 15) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "2 5 10" {
		t.Errorf("ticks of [2, 15] labelled %q, want \"2 5 10\"", got)
	}
	wide := 0
	for _, tk := range (logTicks{}).Ticks(1e-3, 10) {
		if tk.Label != "" {
			wide++
		}
	}
	if wide != 5 {
		t.Errorf("ticks of [1e-3, 10]: %d labels, want the 5 powers of ten", wide)
	}
}
