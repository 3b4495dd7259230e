// Package plot draws the figures of holdgo's toy experiments as PNG files
// with gonum.org/v1/plot: scatter plots of 2-D samples, grids of scatter
// panels (samples at several moments of a generation path), histograms of
// 1-D samples with an optional exact density, and heat maps of a density
// over (time, x) with sample paths drawn over them (the paper's Figure 1).
//
// The API takes plain slices (points are row-major float32 pairs, as
// data.Source fills them) and a file path; every file is written
// atomically (temporary file in the same directory, then rename), so a
// failed call leaves an existing file as it was. Sizes are in pixels at 96
// DPI.
package plot

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"

	"holdgo/internal/atomicfile"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// dpi is the resolution figures are drawn at: a size of N pixels is
// N/96 inches, so 12-point text is 16 pixels high.
const dpi = 96

// Bounds is a fixed plotting window. The zero value means "fit the data".
type Bounds struct {
	XMin, XMax, YMin, YMax float64
}

func (b Bounds) isZero() bool { return b == Bounds{} }

func (b Bounds) valid() bool {
	ok := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	return ok(b.XMin) && ok(b.XMax) && ok(b.YMin) && ok(b.YMax) && b.XMax > b.XMin && b.YMax > b.YMin
}

// fitBounds returns the bounding box of the finite points of xy with a
// margin of 5% of the larger side on every side; a degenerate box gets a
// side of 1.
func fitBounds(sets ...[]float32) Bounds {
	b := Bounds{XMin: math.Inf(1), XMax: math.Inf(-1), YMin: math.Inf(1), YMax: math.Inf(-1)}
	for _, xy := range sets {
		for i := 0; i+1 < len(xy); i += 2 {
			x, y := float64(xy[i]), float64(xy[i+1])
			if math.IsNaN(x) || math.IsNaN(y) || math.IsInf(x, 0) || math.IsInf(y, 0) {
				continue
			}
			b.XMin, b.XMax = min(b.XMin, x), max(b.XMax, x)
			b.YMin, b.YMax = min(b.YMin, y), max(b.YMax, y)
		}
	}
	if b.XMin > b.XMax { // no finite point
		return Bounds{-1, 1, -1, 1}
	}
	side := max(b.XMax-b.XMin, b.YMax-b.YMin)
	if side == 0 {
		side = 1
	}
	m := 0.05 * side
	return Bounds{b.XMin - m, b.XMax + m, b.YMin - m, b.YMax + m}
}

// setBounds sets the axis ranges of p.
func setBounds(p *gplot.Plot, b Bounds) {
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = b.XMin, b.XMax, b.YMin, b.YMax
}

// equalAspect widens the x or y range of p so that one data unit is the
// same length on both axes when p is drawn on c. The tick labels, and so
// the data area, depend on the ranges, so it settles them in a few rounds.
func equalAspect(p *gplot.Plot, c draw.Canvas) {
	b := Bounds{p.X.Min, p.X.Max, p.Y.Min, p.Y.Max}
	for range 3 {
		setBounds(p, b)
		dc := p.DataCanvas(c)
		w, h := float64(dc.Max.X-dc.Min.X), float64(dc.Max.Y-dc.Min.Y)
		if w <= 0 || h <= 0 {
			return
		}
		sx, sy := b.XMax-b.XMin, b.YMax-b.YMin
		if sx/w < sy/h {
			grow := (sy*w/h - sx) / 2
			b.XMin, b.XMax = b.XMin-grow, b.XMax+grow
		} else {
			grow := (sx*h/w - sy) / 2
			b.YMin, b.YMax = b.YMin-grow, b.YMax+grow
		}
		setBounds(p, b)
	}
}

// newCanvas returns a white image canvas of exactly w × h pixels.
func newCanvas(w, h int) (*vgimg.Canvas, draw.Canvas) {
	img := vgimg.NewWith(vgimg.UseImage(image.NewRGBA(image.Rect(0, 0, w, h))), vgimg.UseDPI(dpi))
	return img, draw.New(img)
}

func checkSize(what string, w, h int) error {
	if w < 32 || h < 32 || w > 20000 || h > 20000 {
		return fmt.Errorf("plot: %s: size %d×%d pixels (want 32 to 20000 each)", what, w, h)
	}
	return nil
}

// savePNG encodes img as PNG at path, atomically.
func savePNG(path string, img *vgimg.Canvas) error {
	return writeFileAtomic(path, func(w io.Writer) error {
		_, err := vgimg.PngCanvas{Canvas: img}.WriteTo(w)
		return err
	})
}

// drawTitle writes a centred title in the top band of c, of the given
// height, and returns c without that band.
func drawTitle(c draw.Canvas, title string, band vg.Length) draw.Canvas {
	if title == "" {
		return c
	}
	p := gplot.New() // for the default title style
	sty := p.Title.TextStyle
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	c.FillText(sty, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: c.Max.Y - band/2}, title)
	c.Max.Y -= band
	return c
}

var (
	defaultPointColor = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	defaultLineColor  = color.RGBA{R: 120, G: 220, B: 255, A: 200}
	densityColor      = color.RGBA{R: 214, G: 39, B: 40, A: 255}
)

// writeFileAtomic writes path atomically (package atomicfile).
func writeFileAtomic(path string, write func(io.Writer) error) error {
	if err := atomicfile.Write(path, write); err != nil {
		return fmt.Errorf("plot: write %s: %w", path, err)
	}
	return nil
}
