package imagedata

import "fmt"

// FirstImages opens image data and returns its first n images in [−1, 1], flat (n × C·H·W): the
// points of an empirical-distribution oracle (hold.PointMasses). Its errors name holdctl's flags
// --data and --oracle-n.
func FirstImages(spec string, n int) (*Dataset, []float64, error) {
	ds, err := Open(spec, Options{})
	if err != nil {
		return nil, nil, fmt.Errorf("--data: %v", err)
	}
	if n < 2 || n > ds.Len() {
		return nil, nil, fmt.Errorf("--oracle-n %d: want 2 … %d (the images in %s)", n, ds.Len(), spec)
	}
	dim := ds.Dimension()
	img := make([]float32, dim)
	flat := make([]float64, 0, n*dim)
	for i := range n {
		ds.Scale(img, ds.Pixels(i), false, nil)
		for _, v := range img {
			flat = append(flat, float64(v))
		}
	}
	return ds, flat, nil
}
