package plot

import (
	"fmt"
	"image/color"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ScatterOptions configures Scatter. Zero fields take the defaults given.
type ScatterOptions struct {
	Title         string
	Width, Height int         // pixels; default 600 × 600
	MarkerRadius  float64     // points (1/72 inch); default 1
	Color         color.Color // default a mid blue
	Bounds        Bounds      // window before equalising the aspect; default fits the points
}

// xyPoints adapts row-major pairs to plotter.XYer.
type xyPoints []float32

func (p xyPoints) Len() int                    { return len(p) / 2 }
func (p xyPoints) XY(i int) (float64, float64) { return float64(p[2*i]), float64(p[2*i+1]) }

func checkXY(what string, xy []float32) error {
	if len(xy)%2 != 0 {
		return fmt.Errorf("plot: %s: %d values is not a whole number of (x, y) pairs", what, len(xy))
	}
	return nil
}

// scatterPlot builds the plot of one panel; the caller sets the aspect.
func scatterPlot(title string, xy []float32, radius float64, col color.Color, b Bounds) (*gplot.Plot, error) {
	p := gplot.New()
	p.Title.Text = title
	s, err := plotter.NewScatter(finiteXY(xy))
	if err != nil {
		return nil, err
	}
	s.GlyphStyle = draw.GlyphStyle{Color: col, Radius: vg.Length(radius), Shape: draw.CircleGlyph{}}
	p.Add(s)
	setBounds(p, b)
	return p, nil
}

// finiteXY drops points with a NaN or Inf coordinate, which gonum rejects.
func finiteXY(xy []float32) xyPoints {
	out := make(xyPoints, 0, len(xy))
	for i := 0; i+1 < len(xy); i += 2 {
		x, y := xy[i], xy[i+1]
		if x-x == 0 && y-y == 0 {
			out = append(out, x, y)
		}
	}
	return out
}

func (o *ScatterOptions) defaults() {
	if o.Width == 0 {
		o.Width = 600
	}
	if o.Height == 0 {
		o.Height = 600
	}
	if o.MarkerRadius == 0 {
		o.MarkerRadius = 1
	}
	if o.Color == nil {
		o.Color = defaultPointColor
	}
}

// Scatter draws the 2-D points xy (row-major pairs) as small dots with one
// data unit the same length on both axes, and writes the PNG to path.
// Points with a NaN or Inf coordinate are left out.
func Scatter(path string, xy []float32, opt ScatterOptions) error {
	opt.defaults()
	if err := checkXY("scatter "+path, xy); err != nil {
		return err
	}
	if err := checkSize("scatter "+path, opt.Width, opt.Height); err != nil {
		return err
	}
	b := opt.Bounds
	if b.isZero() {
		b = fitBounds(xy)
	} else if !b.valid() {
		return fmt.Errorf("plot: scatter %s: bad bounds %+v", path, b)
	}
	p, err := scatterPlot(opt.Title, xy, opt.MarkerRadius, opt.Color, b)
	if err != nil {
		return fmt.Errorf("plot: scatter %s: %w", path, err)
	}
	img, c := newCanvas(opt.Width, opt.Height)
	equalAspect(p, c)
	p.Draw(c)
	return savePNG(path, img)
}

// Panel is one scatter plot of a grid.
type Panel struct {
	Title string
	XY    []float32 // row-major (x, y) pairs
}

// GridOptions configures ScatterGrid. Zero fields take the defaults given.
type GridOptions struct {
	Title        string      // drawn above the panels
	Cols         int         // panels per row; default all in one row
	PanelSize    int         // pixels per (square) panel; default 300
	MarkerRadius float64     // points; default 0.8
	Color        color.Color // default a mid blue
	// SharedBounds gives every panel the window that fits all of them;
	// otherwise each fits its own points. Bounds, when set, is used for
	// every panel instead.
	SharedBounds bool
	Bounds       Bounds
}

// ScatterGrid draws the panels side by side (Cols per row), each a scatter
// plot with equal aspect, and writes the PNG to path; for example the
// samples at six moments along a generation path.
func ScatterGrid(path string, panels []Panel, opt GridOptions) error {
	if len(panels) == 0 {
		return fmt.Errorf("plot: grid %s: no panels", path)
	}
	if opt.Cols <= 0 {
		opt.Cols = len(panels)
	}
	if opt.PanelSize == 0 {
		opt.PanelSize = 300
	}
	if opt.MarkerRadius == 0 {
		opt.MarkerRadius = 0.8
	}
	if opt.Color == nil {
		opt.Color = defaultPointColor
	}
	cols := min(opt.Cols, len(panels))
	rows := (len(panels) + cols - 1) / cols
	titleBand := 0
	if opt.Title != "" {
		titleBand = 36
	}
	w, h := cols*opt.PanelSize, rows*opt.PanelSize+titleBand
	if err := checkSize("grid "+path, w, h); err != nil {
		return err
	}
	shared := opt.Bounds
	if !shared.isZero() && !shared.valid() {
		return fmt.Errorf("plot: grid %s: bad bounds %+v", path, shared)
	}
	if shared.isZero() && opt.SharedBounds {
		sets := make([][]float32, len(panels))
		for i, pn := range panels {
			sets[i] = pn.XY
		}
		shared = fitBounds(sets...)
	}
	plots := make([][]*gplot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*gplot.Plot, cols)
	}
	for i, pn := range panels {
		if err := checkXY(fmt.Sprintf("grid %s panel %d", path, i), pn.XY); err != nil {
			return err
		}
		b := shared
		if b.isZero() {
			b = fitBounds(pn.XY)
		}
		p, err := scatterPlot(pn.Title, pn.XY, opt.MarkerRadius, opt.Color, b)
		if err != nil {
			return fmt.Errorf("plot: grid %s panel %d: %w", path, i, err)
		}
		plots[i/cols][i%cols] = p
	}
	img, c := newCanvas(w, h)
	c = drawTitle(c, opt.Title, vg.Length(titleBand)*vg.Inch/dpi)
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: vg.Points(6), PadY: vg.Points(6),
		PadTop: vg.Points(2), PadBottom: vg.Points(4), PadLeft: vg.Points(4), PadRight: vg.Points(6)}
	canvases := gplot.Align(plots, tiles, c)
	for r, row := range plots {
		for k, p := range row {
			if p != nil {
				equalAspect(p, canvases[r][k])
			}
		}
	}
	// Equalising changed the tick labels: align again with the final ranges.
	canvases = gplot.Align(plots, tiles, c)
	for r, row := range plots {
		for k, p := range row {
			if p != nil {
				p.Draw(canvases[r][k])
			}
		}
	}
	return savePNG(path, img)
}
