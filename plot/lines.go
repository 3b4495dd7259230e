package plot

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one line of a LogLog plot: points (X[i], Y[i]) in order.
type Series struct {
	Name string
	X, Y []float64
}

// LogLogOptions configures LogLog. Zero fields take the defaults given.
type LogLogOptions struct {
	Title, XLabel, YLabel string
	Width, Height         int  // pixels; default 900 × 600
	NoMarkers             bool // lines only (long series such as loss curves)
	LinearY               bool // a linear y axis (values within a decade, where log ticks show no labels)
}

// ErrBadValue marks an error of the values given to a plot (errors.Is): input to refuse, not a bug.
var ErrBadValue = errors.New("plot: bad value")

// Log axes show values in [minLog, maxLog]: beyond them the axis range (padded by a factor 1.1) and
// its ticks overflow float64.
const (
	minLog = 1e-300
	maxLog = 1e300
)

// LogLog draws each series as a line with markers on logarithmic x and y
// axes (for instance W1 against NFE, one line per sampler) and writes the
// PNG to path. Points that are not finite and positive cannot be placed on
// a log axis and are left out; a series with none left is an error. A
// positive value outside [1e-300, 1e300] on a log axis is refused
// (ErrBadValue), naming it.
func LogLog(path string, series []Series, opt LogLogOptions) error {
	if opt.Width == 0 {
		opt.Width = 900
	}
	if opt.Height == 0 {
		opt.Height = 600
	}
	if err := checkSize("log-log plot "+path, opt.Width, opt.Height); err != nil {
		return err
	}
	if len(series) == 0 {
		return fmt.Errorf("plot: log-log plot %s: no series", path)
	}
	p := gplot.New()
	p.Title.Text = opt.Title
	p.X.Label.Text, p.Y.Label.Text = opt.XLabel, opt.YLabel
	p.X.Scale, p.Y.Scale = gplot.LogScale{}, gplot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	if opt.LinearY {
		p.Y.Scale, p.Y.Tick.Marker = gplot.LinearScale{}, gplot.DefaultTicks{}
	}
	p.Legend.Top = true
	p.Legend.Left = false
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for k, s := range series {
		if len(s.X) != len(s.Y) {
			return fmt.Errorf("plot: log-log plot %s: series %q has %d x and %d y values", path, s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, 0, len(s.X))
		for i := range s.X {
			if positive(s.X[i]) && positive(s.Y[i]) {
				if err := onLogAxis(path, s.Name, "x", s.X[i]); err != nil {
					return err
				}
				if err := onLogAxis(path, s.Name, "y", s.Y[i]); err != nil {
					return err
				}
				pts = append(pts, plotter.XY{X: s.X[i], Y: s.Y[i]})
				xlo, xhi, ylo, yhi = min(xlo, s.X[i]), max(xhi, s.X[i]), min(ylo, s.Y[i]), max(yhi, s.Y[i])
			}
		}
		if len(pts) == 0 {
			if len(s.X) == 0 {
				return fmt.Errorf("plot: log-log plot %s: series %q has no points", path, s.Name)
			}
			bad := fmt.Sprintf("y = %g", s.Y[0])
			if !positive(s.X[0]) {
				bad = fmt.Sprintf("x = %g", s.X[0])
			}
			return fmt.Errorf("%w: log-log plot %s: series %q has no finite positive point to draw on a log axis (the first has %s)",
				ErrBadValue, path, s.Name, bad)
		}
		line, marks, err := plotter.NewLinePoints(pts)
		if err != nil {
			return fmt.Errorf("plot: log-log plot %s: series %q: %w", path, s.Name, err)
		}
		c := seriesColor(k)
		line.LineStyle = draw.LineStyle{Color: c, Width: vg.Points(1.5), Dashes: seriesDashes(k)}
		if opt.NoMarkers {
			p.Add(line)
			p.Legend.Add(s.Name, line)
			continue
		}
		marks.GlyphStyle = draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: draw.CircleGlyph{}}
		p.Add(line, marks)
		p.Legend.Add(s.Name, line, marks)
	}
	// Explicit positive ranges: gonum pads an empty range by ±1, which a log axis cannot show.
	p.X.Min, p.X.Max = logRange(xlo, xhi)
	p.Y.Min, p.Y.Max = logRange(ylo, yhi)
	if opt.LinearY {
		p.Y.Min, p.Y.Max = 0, yhi*1.05
	}
	img, c := newCanvas(opt.Width, opt.Height)
	p.Draw(c)
	return savePNG(path, img)
}

// logTicks is gonum's LogTicks, except on an axis that spans less than about a decade, where LogTicks
// labels no tick at all (a KID axis from 600 to 900 had none): there it labels m·10^k for m = 1…9 (all of
// them when the axis spans less than a factor 3, else m = 1, 2, 5 with the others unlabelled).
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []gplot.Tick {
	if !(lo > 0) || hi/lo >= 8 {
		return gplot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	var ticks []gplot.Tick
	for k := math.Floor(math.Log10(lo)); math.Pow(10, k) <= hi; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, k)
			if v < lo || v > hi {
				continue
			}
			t := gplot.Tick{Value: v}
			if hi/lo < 3 || m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// logRange widens [lo, hi] by a factor 1.1 on each side (2 when lo == hi).
func logRange(lo, hi float64) (float64, float64) {
	if lo == hi {
		return lo / 2, hi * 2
	}
	return lo / 1.1, hi * 1.1
}

func positive(v float64) bool { return v > 0 && !math.IsInf(v, 0) }

// onLogAxis refuses a positive value that a log axis cannot show.
func onLogAxis(path, series, axis string, v float64) error {
	if v < minLog || v > maxLog {
		return fmt.Errorf("%w: log-log plot %s: series %q has %s = %g, beyond what a log axis shows (%g … %g)",
			ErrBadValue, path, series, axis, v, minLog, maxLog)
	}
	return nil
}

// seriesColor cycles through ten distinguishable colours (matplotlib's
// tab10); seriesDashes changes the dash pattern every ten series so that
// up to thirty lines stay distinct.
func seriesColor(k int) color.Color {
	tab10 := [...]color.RGBA{
		{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
		{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
	}
	return tab10[k%len(tab10)]
}

func seriesDashes(k int) []vg.Length {
	switch (k / 10) % 3 {
	case 1:
		return []vg.Length{vg.Points(6), vg.Points(3)}
	case 2:
		return []vg.Length{vg.Points(2), vg.Points(2)}
	}
	return nil
}
