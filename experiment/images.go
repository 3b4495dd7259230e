package experiment

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"holdgo/hold"
	"holdgo/imagedata"
	"holdgo/sample"
)

// ImageStudyConfig configures ImageStudy: samplers with the exact score of the empirical distribution
// of N images (hold.MixtureOracle with one point-mass component per image, x̂₀ the softmax-weighted
// average of the images).
type ImageStudyConfig struct {
	Images   []float64 // N × Dim, scaled as for training ([−1, 1])
	Dim      int
	Samplers []string // "kind-method" as MixtureStudy
	NFEs     []int
	Grid     string // one grid for every row [quadratic]
	Samples  int    // samples per cell [200]
	Seed     uint64 //
	EndTime  map[string]float64
	Workers  int
}

// ImagePoint is one cell: RelDist is the mean over the samples of (distance to the nearest training
// image)/(the median distance of a training image to its nearest other image): 0 for a sampler that
// reproduces training images. Entropy is the entropy of which image is nearest, divided by its
// ideal log min(N, samples) (1: every hit a different image).
type ImagePoint struct {
	Sampler    string
	NFE, Steps int
	RelDist    float64
	Entropy    float64
	Diverged   int
}

// ImageTable is ImageStudy's result.
type ImageTable struct {
	Config  ImageStudyConfig
	N       int
	Typical float64 // median nearest-other-image distance
	Points  []ImagePoint
}

// nearest returns for each row of q (M×dim) the index of and distance to the nearest of the N points
// (‖q‖² − 2q·x + ‖x‖², the cross term a product of the two matrices), skipping index skip[m] if given.
func nearest(q, pts []float64, dim int, norms []float64, skip []int) ([]int, []float64) {
	m := len(q) / dim
	idx, dist := make([]int, m), make([]float64, m)
	for i := range m {
		row := q[i*dim : (i+1)*dim]
		var qq float64
		for _, v := range row {
			qq += v * v
		}
		best, bestD := -1, math.Inf(1)
		for k := range norms {
			if skip != nil && skip[i] == k {
				continue
			}
			var dot float64
			for j, v := range pts[k*dim : (k+1)*dim] {
				dot += v * row[j]
			}
			if d := qq - 2*dot + norms[k]; d < bestD {
				best, bestD = k, d
			}
		}
		idx[i], dist[i] = best, math.Sqrt(math.Max(bestD, 0))
	}
	return idx, dist
}

// ImageStudyData is ImageStudy of the empirical distribution of the first n images of the data set
// spec (KIND:PATH), which give cfg its Images and Dim; an error of spec is a *ParamError.
func ImageStudyData(spec string, n int, cfg ImageStudyConfig) (*ImageTable, error) {
	if !imagedata.IsSpec(spec) {
		return nil, &ParamError{fmt.Errorf("--data %q: want KIND:PATH with KIND one of %s", spec, strings.Join(imagedata.Kinds, ", "))}
	}
	ds, flat, err := imagedata.FirstImages(spec, n)
	if err != nil {
		return nil, &ParamError{err}
	}
	cfg.Images, cfg.Dim = flat, ds.Dimension()
	return ImageStudy(cfg)
}

// ImageStudy samples each sampler at each NFE with the empirical-distribution oracle and measures
// how close the samples come to training images and how evenly they spread over them.
func ImageStudy(cfg ImageStudyConfig) (*ImageTable, error) {
	if cfg.Dim < 1 || len(cfg.Images) < 2*cfg.Dim || len(cfg.Images)%cfg.Dim != 0 {
		return nil, fmt.Errorf("experiment: image study needs at least two images of dimension %d, got %d values", cfg.Dim, len(cfg.Images))
	}
	if cfg.Grid == "" {
		cfg.Grid = sample.GridQuadratic
	}
	if cfg.Samples == 0 {
		cfg.Samples = 200
	}
	ends := hold.DefaultEndTimes()
	for k, v := range cfg.EndTime {
		ends[k] = v
	}
	n := len(cfg.Images) / cfg.Dim
	mix := hold.PointMasses(cfg.Images, cfg.Dim)
	norms := make([]float64, n)
	for k := range n {
		for _, v := range mix.Means[k] {
			norms[k] += v * v
		}
	}
	self := make([]int, n)
	for k := range self {
		self[k] = k
	}
	_, nn := nearest(cfg.Images, cfg.Images, cfg.Dim, norms, self)
	sorted := append([]float64(nil), nn...)
	sort.Float64s(sorted)
	tab := &ImageTable{Config: cfg, N: n, Typical: sorted[n/2]}
	for _, name := range cfg.Samplers {
		kind, method, _, err := StudyMethod(name)
		if err != nil {
			return nil, err
		}
		sde, err := hold.New(hold.DefaultConfig(kind))
		if err != nil {
			return nil, err
		}
		orc, err := hold.NewMixtureOracle(sde, mix)
		if err != nil {
			return nil, err
		}
		for _, nfe := range cfg.NFEs {
			steps, err := sample.StepsFor(strings.SplitN(name, "-", 2)[1], nfe, true)
			if err != nil {
				return nil, err
			}
			grid, err := sample.NewSDEGrid(sde, cfg.Grid, sde.Horizon(), ends[kind], steps)
			if err != nil {
				return nil, err
			}
			s := &sample.Sampler{SDE: sde, Score: orc, Method: method, Grid: grid, Dim: cfg.Dim, Denoise: true, Workers: cfg.Workers, MaxBatch: 64}
			res, err := s.Sample(cfg.Samples, cfg.Seed)
			if err != nil {
				return nil, fmt.Errorf("experiment: image study %s at NFE %d: %w", name, nfe, err)
			}
			blocks := sde.Blocks()
			q := make([]float64, 0, cfg.Samples*cfg.Dim)
			pt := ImagePoint{Sampler: name, NFE: res.NFE, Steps: steps, Diverged: res.Diverged}
			for i := range cfg.Samples {
				row := res.X[i*blocks*cfg.Dim : i*blocks*cfg.Dim+cfg.Dim]
				if sample.Diverged(row) {
					continue
				}
				q = append(q, row...)
			}
			idx, dist := nearest(q, cfg.Images, cfg.Dim, norms, nil)
			hits := map[int]int{}
			for i, d := range dist {
				pt.RelDist += d / tab.Typical / float64(len(dist))
				hits[idx[i]]++
			}
			for _, c := range hits {
				p := float64(c) / float64(len(idx))
				pt.Entropy -= p * math.Log(p)
			}
			if ideal := math.Log(float64(min(n, len(idx)))); ideal > 0 {
				pt.Entropy /= ideal
			}
			tab.Points = append(tab.Points, pt)
		}
	}
	return tab, nil
}

// WriteMarkdown writes one row per sampler, one column per NFE: relative nearest-image distance and,
// in brackets, the normalised hit entropy.
func (t *ImageTable) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Empirical-distribution oracle of %d images (dimension %d), %d samples per cell, seed %d, %s grid, x̂₀ read-out / denoising step counted.\n",
		t.N, t.Config.Dim, t.Config.Samples, t.Config.Seed, t.Config.Grid)
	fmt.Fprintf(&b, "Cells: mean nearest-training-image distance / median inter-image nearest distance (%.4g); in brackets the hit entropy / its ideal.\n\n| sampler |", t.Typical)
	for _, n := range t.Config.NFEs {
		fmt.Fprintf(&b, " NFE %d |", n)
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(t.Config.NFEs)) + "\n")
	for _, name := range t.Config.Samplers {
		fmt.Fprintf(&b, "| %s |", name)
		for _, p := range t.Points {
			if p.Sampler == name {
				fmt.Fprintf(&b, " %.3f (%.2f) |", p.RelDist, p.Entropy)
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}
