package plot

import (
	"fmt"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/png"
	"io"
	"math"
	"slices"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"holdgo/internal/atomicfile"
)

// Grid is a function of (time, x) sampled on a rectangular grid: Z holds
// len(T) columns of len(X) values, Z[i*len(X) + j] being the value at time
// T[i] and position X[j]. T and X are the centres of evenly spaced cells,
// increasing, at least two of each.
type Grid struct {
	T, X []float64
	Z    []float64
}

func (g Grid) validate() error {
	if len(g.T) < 2 || len(g.X) < 2 {
		return fmt.Errorf("grid of %d times × %d positions (want at least 2 × 2)", len(g.T), len(g.X))
	}
	if len(g.Z) != len(g.T)*len(g.X) {
		return fmt.Errorf("grid of %d × %d holds %d values, want %d", len(g.T), len(g.X), len(g.Z), len(g.T)*len(g.X))
	}
	for _, axis := range [][]float64{g.T, g.X} {
		step := (axis[len(axis)-1] - axis[0]) / float64(len(axis)-1)
		if !(step > 0) || math.IsInf(step, 0) {
			return fmt.Errorf("grid coordinates must increase: %v … %v", axis[0], axis[len(axis)-1])
		}
		for i, v := range axis {
			if math.Abs(v-(axis[0]+float64(i)*step)) > 1e-6*step {
				return fmt.Errorf("grid coordinates are not evenly spaced at index %d", i)
			}
		}
	}
	return nil
}

// DensityGrid histograms each snapshot of 1-D samples (snapshots[i] taken
// at times[i]) into bins equal cells over [lo, hi] and returns the
// densities (each column integrates to the fraction of its samples inside
// [lo, hi]) as a Grid for Heatmap: the marginal density over time.
func DensityGrid(times []float64, snapshots [][]float32, lo, hi float64, bins int) (Grid, error) {
	if len(times) != len(snapshots) {
		return Grid{}, fmt.Errorf("plot: density grid: %d times, %d snapshots", len(times), len(snapshots))
	}
	if bins < 2 || !(hi > lo) {
		return Grid{}, fmt.Errorf("plot: density grid: %d bins over [%v, %v]", bins, lo, hi)
	}
	width := (hi - lo) / float64(bins)
	g := Grid{T: append([]float64(nil), times...), X: make([]float64, bins), Z: make([]float64, len(times)*bins)}
	for j := range g.X {
		g.X[j] = lo + (float64(j)+0.5)*width
	}
	for i, snap := range snapshots {
		if len(snap) == 0 {
			continue
		}
		col := g.Z[i*bins : (i+1)*bins]
		for _, v := range snap {
			f := float64(v)
			if f >= lo && f <= hi {
				col[min(int((f-lo)/width), bins-1)]++
			}
		}
		for j := range col {
			col[j] /= float64(len(snap)) * width
		}
	}
	return g, nil
}

// Path is a curve x(t) drawn over a heat map, e.g. one probability-flow
// trajectory.
type Path struct {
	T, X []float64
}

// HeatmapOptions configures Heatmap. Zero fields take the defaults given.
type HeatmapOptions struct {
	Title         string
	XLabel        string // default "t"
	YLabel        string // default "x"
	Width, Height int    // pixels; default 900 × 500
	// Log colours by log(1 + z/s), s the 1st percentile of the positive
	// values, so that wide low densities stay visible next to sharp peaks.
	Log bool
	// ColumnNormalize divides each column by its maximum before colouring,
	// so every time uses the full colour range.
	ColumnNormalize bool
	LineColor       color.Color // default a translucent light blue
	LineWidth       float64     // points; default 0.6
}

// raster is a plot.Plotter that paints grid cells at the resolution of
// the canvas, each pixel the colour of the cell under its centre (nearest
// cell, no smoothing between cells, unlike gonum's rasterised HeatMap,
// whose image is scaled with interpolation).
type raster struct {
	g      Grid
	z      []float64 // values to colour by, laid out as g.Z
	lo, hi float64   // the colour range
	pal    []color.Color
}

// cellRange returns the outer edges of the cells along an axis of centres.
func cellRange(axis []float64) (float64, float64) {
	half := (axis[len(axis)-1] - axis[0]) / float64(len(axis)-1) / 2
	return axis[0] - half, axis[len(axis)-1] + half
}

// DataRange implements plot.DataRanger.
func (r *raster) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmin, xmax = cellRange(r.g.T)
	ymin, ymax = cellRange(r.g.X)
	return
}

// Plot implements plot.Plotter.
func (r *raster) Plot(c draw.Canvas, p *gplot.Plot) {
	trX, trY := p.Transforms(&c)
	xmin, xmax, ymin, ymax := r.DataRange()
	x0, x1 := trX(xmin), trX(xmax)
	y0, y1 := trY(ymin), trY(ymax)
	toPx := func(l vg.Length) int { return max(1, int(math.Ceil(float64(l/vg.Inch)*dpi))) }
	w, h := toPx(x1-x0), toPx(y1-y0)
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	nt, nx := len(r.g.T), len(r.g.X)
	scale := float64(len(r.pal)-1) / (r.hi - r.lo)
	for py := range h {
		// Image rows run top to bottom, x runs bottom to top.
		j := min(int((float64(h-py)-0.5)/float64(h)*float64(nx)), nx-1)
		for px := range w {
			i := min(int((float64(px)+0.5)/float64(w)*float64(nt)), nt-1)
			v := r.z[i*nx+j]
			if math.IsNaN(v) {
				continue
			}
			k := int(math.Round((v - r.lo) * scale))
			img.Set(px, py, r.pal[min(max(k, 0), len(r.pal)-1)])
		}
	}
	c.DrawImage(vg.Rectangle{Min: vg.Point{X: x0, Y: y0}, Max: vg.Point{X: x1, Y: y1}}, img)
}

// minMax returns the largest (hi) or smallest finite value of z; 0 when
// there is none.
func minMax(z []float64, hi bool) float64 {
	m := math.NaN()
	for _, v := range z {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		if math.IsNaN(m) || (hi && v > m) || (!hi && v < m) {
			m = v
		}
	}
	if math.IsNaN(m) {
		return 0
	}
	return m
}

// Heatmap draws g as a heat map with time along the horizontal axis and x
// up the vertical one, draws the paths over it, and writes the PNG to path
// (the layout of the paper's Figure 1). Colours run from black (the
// smallest value) through blue and red to pale yellow (the largest);
// NaN cells are left white. Paths are clipped to the grid.
func Heatmap(path string, g Grid, paths []Path, opt HeatmapOptions) error {
	img, err := heatmapCanvas("heat map "+path, g, paths, opt)
	if err != nil {
		return err
	}
	return savePNG(path, img)
}

// HeatPanel is one panel of HeatmapRow: a heat map with its paths.
type HeatPanel struct {
	Grid  Grid
	Paths []Path
	Opt   HeatmapOptions
}

// HeatmapRow draws the panels as Heatmap does and writes them side by side, top-aligned on white, as
// one PNG at path.
func HeatmapRow(path string, panels []HeatPanel) error {
	imgs := make([]image.Image, len(panels))
	width, height := 0, 0
	for i, p := range panels {
		c, err := heatmapCanvas(fmt.Sprintf("heat map panel %d of %s", i+1, path), p.Grid, p.Paths, p.Opt)
		if err != nil {
			return err
		}
		imgs[i] = c.Image()
		width += imgs[i].Bounds().Dx()
		height = max(height, imgs[i].Bounds().Dy())
	}
	canvas := image.NewRGBA(image.Rect(0, 0, width, height))
	stddraw.Draw(canvas, canvas.Bounds(), image.NewUniform(color.White), image.Point{}, stddraw.Src)
	x := 0
	for _, img := range imgs {
		b := img.Bounds()
		stddraw.Draw(canvas, image.Rect(x, 0, x+b.Dx(), b.Dy()), img, b.Min, stddraw.Src)
		x += b.Dx()
	}
	if err := atomicfile.Write(path, func(w io.Writer) error { return png.Encode(w, canvas) }); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// heatmapCanvas draws Heatmap's picture; what names it in errors.
func heatmapCanvas(what string, g Grid, paths []Path, opt HeatmapOptions) (*vgimg.Canvas, error) {
	if opt.Width == 0 {
		opt.Width = 900
	}
	if opt.Height == 0 {
		opt.Height = 500
	}
	if opt.XLabel == "" {
		opt.XLabel = "t"
	}
	if opt.YLabel == "" {
		opt.YLabel = "x"
	}
	if opt.LineColor == nil {
		opt.LineColor = defaultLineColor
	}
	if opt.LineWidth == 0 {
		opt.LineWidth = 0.6
	}
	if err := checkSize(what, opt.Width, opt.Height); err != nil {
		return nil, err
	}
	if err := g.validate(); err != nil {
		return nil, fmt.Errorf("plot: %s: %w", what, err)
	}
	z := scaleGrid(g, opt)
	hm := &raster{g: g, z: z, lo: minMax(z, false), hi: minMax(z, true),
		pal: heatPalette()}
	if hm.hi == hm.lo {
		hm.hi = hm.lo + 1
	}

	p := gplot.New()
	p.Title.Text = opt.Title
	p.X.Label.Text, p.Y.Label.Text = opt.XLabel, opt.YLabel
	p.Add(hm)
	xmin, xmax, ymin, ymax := hm.DataRange()
	for i, pt := range paths {
		if len(pt.T) != len(pt.X) {
			return nil, fmt.Errorf("plot: %s: path %d has %d times and %d positions", what, i, len(pt.T), len(pt.X))
		}
		xys := make(plotter.XYs, 0, len(pt.T))
		for k := range pt.T {
			if !math.IsNaN(pt.T[k]) && !math.IsNaN(pt.X[k]) && !math.IsInf(pt.T[k], 0) && !math.IsInf(pt.X[k], 0) {
				xys = append(xys, plotter.XY{X: pt.T[k], Y: pt.X[k]})
			}
		}
		if len(xys) < 2 {
			continue
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("plot: %s: path %d: %w", what, i, err)
		}
		l.LineStyle = draw.LineStyle{Color: opt.LineColor, Width: vg.Points(opt.LineWidth)}
		p.Add(l)
	}
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	img, c := newCanvas(opt.Width, opt.Height)
	p.Draw(c)
	return img, nil
}

// heatPalette is moreland's extended black-body map (black, blue, red,
// yellow, white) stopped at pale yellow, so the largest values stay
// distinct from the white background.
func heatPalette() []color.Color {
	return moreland.ExtendedBlackBody().Palette(256).Colors()[:236]
}

// scaleGrid returns the values to colour by: per-column normalised and/or
// log-compressed as the options ask. NaN stays NaN (drawn transparent).
func scaleGrid(g Grid, opt HeatmapOptions) []float64 {
	z := append([]float64(nil), g.Z...)
	nx := len(g.X)
	if opt.ColumnNormalize {
		for i := range g.T {
			col := z[i*nx : (i+1)*nx]
			if m := minMax(col, true); m > 0 {
				for j := range col {
					col[j] /= m
				}
			}
		}
	}
	if opt.Log {
		pos := make([]float64, 0, len(z))
		for _, v := range z {
			if v > 0 && !math.IsInf(v, 0) {
				pos = append(pos, v)
			}
		}
		if len(pos) > 0 {
			slices.Sort(pos)
			s := pos[len(pos)/100]
			for i, v := range z {
				if v >= 0 {
					z[i] = math.Log1p(v / s)
				}
			}
		}
	}
	return z
}
