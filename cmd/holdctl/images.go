package main

import (
	"fmt"
	"math"
	"path/filepath"

	"holdgo/data"
	"holdgo/imagedata"
)

// writeModelSamples writes samples q (n × dim) of a model trained on src:
// image data sets go to PNG as an image grid, everything else through
// writeSamples.
func writeModelSamples(src data.Source, path string, q []float32, dim int, title string) error {
	if d, ok := src.(*imagedata.Dataset); ok && filepath.Ext(path) == ".png" {
		return writeImageGrid(path, q, d.C, d.H, d.W)
	}
	return writeSamples(path, q, dim, title)
}

// writeImageGrid writes samples q (n × C·H·W in [−1, 1]) as an about
// square PNG grid, pixels doubled for images up to 32×32.
func writeImageGrid(path string, q []float32, c, h, w int) error {
	dim := c * h * w
	if len(q)%dim != 0 {
		return fmt.Errorf("%s: %d values are not whole %d×%d×%d images", path, len(q), c, h, w)
	}
	n := len(q) / dim
	cols := int(math.Ceil(math.Sqrt(float64(n))))
	scale := 1
	if h <= 32 {
		scale = 2
	}
	return imagedata.WriteGrid(path, q, n, c, h, w, cols, scale)
}
