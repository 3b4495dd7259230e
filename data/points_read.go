package data

import (
	"fmt"
	"math"
)

// ReadPoints reads a .npy file of points (n, d) as float32: at least two points, no NaN or Inf.
func ReadPoints(path string) ([]float32, int, error) {
	a, err := ReadNPY(path)
	if err != nil {
		return nil, 0, err
	}
	if a.Rows() < 2 || a.Cols() < 1 {
		return nil, 0, fmt.Errorf("%s: shape %v: want at least 2 points of at least 1 value", path, a.Shape)
	}
	bad := 0
	for _, v := range a.Data {
		if math.IsNaN(v) || math.Abs(v) > math.MaxFloat32 {
			bad++
		}
	}
	if bad > 0 {
		return nil, 0, fmt.Errorf("%s: %d of %d values are NaN or Inf (a diverged sampler?)", path, bad, len(a.Data))
	}
	return a.Float32(), a.Cols(), nil
}
