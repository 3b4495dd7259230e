package imagedata

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"holdgo/internal/atomicfile"
)

// GridImage tiles n images of c×h×w values in [−1, 1] (channel planes) into
// one picture with cols columns and a 2-pixel border; values are clipped.
// c is 1 (gray) or 3 (RGB); scale ≥ 1 repeats every pixel.
func GridImage(x []float32, n, c, h, w, cols, scale int) (image.Image, error) {
	if (c != 1 && c != 3) || n < 1 || len(x) < n*c*h*w || cols < 1 || scale < 1 {
		return nil, fmt.Errorf("imagedata: grid of %d images %d×%d×%d from %d values (want c 1 or 3)", n, c, h, w, len(x))
	}
	const pad = 2
	rows := (n + cols - 1) / cols
	W, H := pad+cols*(w*scale+pad), pad+rows*(h*scale+pad)
	img := image.NewRGBA(image.Rect(0, 0, W, H))
	for i := range img.Pix {
		img.Pix[i] = 255
	}
	level := func(v float32) uint8 {
		f := (float64(v) + 1) / 2 * 255
		if math.IsNaN(f) {
			return 0
		}
		return uint8(math.Round(math.Min(255, math.Max(0, f))))
	}
	for i := range n {
		ox, oy := pad+i%cols*(w*scale+pad), pad+i/cols*(h*scale+pad)
		im := x[i*c*h*w : (i+1)*c*h*w]
		for y := range h * scale {
			for xx := range w * scale {
				p := y/scale*w + xx/scale
				var col color.RGBA
				if c == 1 {
					g := level(im[p])
					col = color.RGBA{g, g, g, 255}
				} else {
					col = color.RGBA{level(im[p]), level(im[h*w+p]), level(im[2*h*w+p]), 255}
				}
				img.SetRGBA(ox+xx, oy+y, col)
			}
		}
	}
	return img, nil
}

// WriteGrid writes GridImage(…) as a PNG file (atomically).
func WriteGrid(path string, x []float32, n, c, h, w, cols, scale int) error {
	img, err := GridImage(x, n, c, h, w, cols, scale)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(wr io.Writer) error { return png.Encode(wr, img) })
}
