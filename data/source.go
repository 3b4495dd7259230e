// Package data holds the training distributions of holdgo: the paper's toy
// data (a 1-D Gaussian mixture and 2-D multi Swiss rolls), points read from
// .npy files, and .npy reading and writing.
//
// Every distribution is a Source: an infinite stream of independent points
// drawn from a caller's seeded tensor.RNG, so a run is fixed by its seed.
package data

import (
	"fmt"
	"math"
	"os"
	"strings"

	"holdgo/tensor"
)

// Source is a distribution to draw training points from.
type Source interface {
	// Dimension is the number of values per point.
	Dimension() int
	// Name identifies the source in logs and file names.
	Name() string
	// Sample fills dst (n points × Dimension values, row-major) with n
	// independent draws; len(dst) must be a multiple of Dimension.
	Sample(rng *tensor.RNG, dst []float32)
}

// Draw returns n points of src in a new slice (n × Dimension, row-major).
func Draw(src Source, rng *tensor.RNG, n int) []float32 {
	dst := make([]float32, n*src.Dimension())
	src.Sample(rng, dst)
	return dst
}

// Open returns the source a command-line spec names: "gmm1d" (the paper's
// 1-D mixture), "swissroll" (the paper's five Swiss rolls with the given
// noise; the paper uses DefaultSwissNoise) or the path of a .npy file.
func Open(spec string, swissNoise float64) (Source, error) {
	switch {
	case spec == NameGMM1D:
		return PaperMixture(), nil
	case spec == NameSwissRoll:
		r := PaperSwissRoll()
		r.Noise = swissNoise
		if err := r.Validate(); err != nil {
			return nil, err
		}
		return r, nil
	case strings.HasSuffix(spec, ".npy"):
		return FromNPY(spec)
	}
	return nil, fmt.Errorf("data: unknown data set %q (want %s, %s or a .npy file)", spec, NameGMM1D, NameSwissRoll)
}

// Points is the empirical distribution of a fixed set of points: Sample
// draws uniformly with replacement, so a stream of batches is i.i.d. and
// depends only on the seed (not on where an epoch boundary falls).
type Points struct {
	name string
	dim  int
	data []float32
}

// NewPoints returns the empirical distribution of data (n × dim,
// row-major, n ≥ 1). It keeps data; the caller must not change it.
func NewPoints(name string, data []float32, dim int) (*Points, error) {
	switch {
	case dim < 1:
		return nil, fmt.Errorf("data: points %s: dimension %d < 1", name, dim)
	case len(data) == 0:
		return nil, fmt.Errorf("data: points %s: no points", name)
	case len(data)%dim != 0:
		return nil, fmt.Errorf("data: points %s: %d values is not a multiple of dimension %d", name, len(data), dim)
	}
	return &Points{name: name, dim: dim, data: data}, nil
}

// FromNPY returns the empirical distribution of the points in a .npy file
// (see ReadNPY): shape (n, d) gives n points of dimension d, shape (n,) n
// points of dimension 1. Errors name the file.
func FromNPY(path string) (*Points, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read npy: %w", err)
	}
	return PointsFromNPY(path, b)
}

// PointsFromNPY is FromNPY of the bytes b of a .npy file called name.
func PointsFromNPY(name string, b []byte) (*Points, error) {
	a, err := DecodeNPY(b)
	if err != nil {
		return nil, fmt.Errorf("read npy %s: %w", name, err)
	}
	if a.Rows() == 0 || a.Cols() == 0 {
		return nil, fmt.Errorf("read npy %s: shape %v holds no points", name, a.Shape)
	}
	for i, v := range a.Data {
		if math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
			return nil, fmt.Errorf("read npy %s: value %d (point %d) is %v", name, i, i/a.Cols(), v)
		}
	}
	return NewPoints(name, a.Float32(), a.Cols())
}

// Dimension implements Source.
func (p *Points) Dimension() int { return p.dim }

// Name implements Source.
func (p *Points) Name() string { return p.name }

// Len is the number of points.
func (p *Points) Len() int { return len(p.data) / p.dim }

// Data returns the points (n × Dimension, row-major); do not modify.
func (p *Points) Data() []float32 { return p.data }

// Sample implements Source: each row of dst is a copy of a point chosen by
// rng.IntN(Len()).
func (p *Points) Sample(rng *tensor.RNG, dst []float32) {
	checkDst(p.name, dst, p.dim)
	n := p.Len()
	for row := 0; row < len(dst); row += p.dim {
		i := rng.IntN(n) * p.dim
		copy(dst[row:row+p.dim], p.data[i:i+p.dim])
	}
}

func checkDst(name string, dst []float32, dim int) {
	if len(dst)%dim != 0 {
		panic(fmt.Sprintf("data: %s: Sample into %d values, not a multiple of dimension %d", name, len(dst), dim))
	}
}
