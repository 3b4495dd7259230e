package plot

import (
	"fmt"
	"math"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// HistogramOptions configures Histogram. Zero fields take the defaults
// given.
type HistogramOptions struct {
	Title         string
	XLabel        string
	Width, Height int // pixels; default 800 × 500
	Bins          int // default 100
	// XMin and XMax fix the binned range (samples outside are left out);
	// both zero fits the samples.
	XMin, XMax float64
	// Density, when set, is drawn over the histogram as a curve, e.g. the
	// exact density of data.Mixture (its PDF method).
	Density func(float64) float64
}

// Histogram draws a histogram of the 1-D samples x normalised to unit area
// (so it estimates the density), optionally with an exact density drawn
// over it, and writes the PNG to path. NaN and Inf samples are left out.
func Histogram(path string, x []float32, opt HistogramOptions) error {
	if opt.Width == 0 {
		opt.Width = 800
	}
	if opt.Height == 0 {
		opt.Height = 500
	}
	if opt.Bins == 0 {
		opt.Bins = 100
	}
	if err := checkSize("histogram "+path, opt.Width, opt.Height); err != nil {
		return err
	}
	if opt.Bins < 1 {
		return fmt.Errorf("plot: histogram %s: %d bins", path, opt.Bins)
	}
	lo, hi := opt.XMin, opt.XMax
	fit := lo == 0 && hi == 0
	if fit {
		lo, hi = math.Inf(1), math.Inf(-1)
	}
	vals := make(plotter.Values, 0, len(x))
	for _, v := range x {
		f := float64(v)
		if math.IsNaN(f) || math.IsInf(f, 0) || (!fit && (f < lo || f > hi)) {
			continue
		}
		vals = append(vals, f)
		if fit {
			lo, hi = min(lo, f), max(hi, f)
		}
	}
	if len(vals) == 0 {
		return fmt.Errorf("plot: histogram %s: no finite samples in range", path)
	}
	if !(hi > lo) {
		if !fit {
			return fmt.Errorf("plot: histogram %s: bad range [%v, %v]", path, lo, hi)
		}
		lo, hi = lo-0.5, hi+0.5
	}
	// Bin here rather than with plotter.NewHistogram, which can panic on a
	// value that rounds into the bin past the last.
	width := (hi - lo) / float64(opt.Bins)
	bins := make([]plotter.HistogramBin, opt.Bins)
	for i := range bins {
		bins[i].Min, bins[i].Max = lo+float64(i)*width, lo+float64(i+1)*width
	}
	for _, v := range vals {
		k := min(max(int((v-lo)/width), 0), opt.Bins-1)
		bins[k].Weight++
	}
	ymax := 0.0
	for i := range bins {
		bins[i].Weight /= float64(len(vals)) * width // unit area
		ymax = max(ymax, bins[i].Weight)
	}
	h := &plotter.Histogram{Bins: bins, Width: width, FillColor: defaultPointColor}

	p := gplot.New()
	p.Title.Text = opt.Title
	p.X.Label.Text = opt.XLabel
	p.Y.Label.Text = "density"
	p.Add(h)
	margin := 0.02 * (hi - lo)
	p.X.Min, p.X.Max = lo-margin, hi+margin
	if opt.Density != nil {
		f := plotter.NewFunction(opt.Density)
		f.Samples = max(2000, 4*opt.Width)
		f.XMin, f.XMax = p.X.Min, p.X.Max
		f.LineStyle = draw.LineStyle{Color: densityColor, Width: vg.Points(1.5)}
		for i := range f.Samples {
			v := opt.Density(f.XMin + (f.XMax-f.XMin)*float64(i)/float64(f.Samples-1))
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				ymax = max(ymax, v)
			}
		}
		p.Add(f)
		p.Legend.Add("samples", h)
		p.Legend.Add("exact density", f)
		p.Legend.Top = true
		p.Legend.XOffs = -vg.Points(8)
	}
	p.Y.Min, p.Y.Max = 0, 1.05*ymax
	if p.Y.Max == 0 {
		p.Y.Max = 1
	}
	img, c := newCanvas(opt.Width, opt.Height)
	p.Draw(c)
	return savePNG(path, img)
}
