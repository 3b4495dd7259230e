package sample

import (
	"fmt"
)

// PropagateMoments propagates the mean (N) and covariance (N×N, row-major) of one sample's state
// (N = n·d) exactly through the sampler's steps (and its denoising step), without Monte Carlo.
//
// It applies when every step is an affine map of the state and the step's noise, x ← c + M·x + G·z —
// true for the fixed-step methods when the score is affine in x, as the exact score of Gaussian data is
// (a one-component hold.MixtureOracle). The step's c, M and G are read off by running the sampler's own
// step on probe rows: x = 0 and z = 0 gives c; x = e_j gives c + M e_j; z = e_k gives c + G e_k. Then
// mean ← c + M·mean and cov ← M·cov·Mᵀ + G·Gᵀ. The probes do not check that the score is affine.
// Not for PredictorCorrector (its step size depends on the batch) or the adaptive DormandPrince.
func PropagateMoments(s *Sampler, mean, cov []float64) ([]float64, []float64, error) {
	if err := s.validate(); err != nil {
		return nil, nil, err
	}
	st, ok := s.Method.(stepper)
	if !ok {
		return nil, nil, fmt.Errorf("sample: moments: %s is not a fixed-step method", s.Method.Name())
	}
	if _, pc := s.Method.(PredictorCorrector); pc {
		return nil, nil, fmt.Errorf("sample: moments: the PC corrector is not affine in the state")
	}
	dim := s.SDE.Blocks() * s.Dim
	if len(mean) != dim || len(cov) != dim*dim {
		return nil, nil, fmt.Errorf("sample: moments: want mean %d and covariance %d values, got %d and %d", dim, dim*dim, len(mean), len(cov))
	}
	mean = append([]float64(nil), mean...)
	cov = append([]float64(nil), cov...)
	apply := func(step func(r *run, x []float64, batch int) error) error {
		// Count the step's noise draws with one sample.
		counter := &countNoise{}
		if err := step(s.newRun(1, counter), make([]float64, dim), 1); err != nil {
			return err
		}
		k := counter.n
		batch := 1 + dim + k
		x := make([]float64, batch*dim)
		for j := 0; j < dim; j++ {
			x[(1+j)*dim+j] = 1
		}
		if err := step(s.newRun(batch, &probeNoise{batch: batch, first: 1 + dim}), x, batch); err != nil {
			return err
		}
		c := x[:dim]
		m := make([]float64, dim*dim) // M[i][j]
		for j := 0; j < dim; j++ {
			for i := 0; i < dim; i++ {
				m[i*dim+j] = x[(1+j)*dim+i] - c[i]
			}
		}
		newMean := append([]float64(nil), c...)
		for i := 0; i < dim; i++ {
			for j := 0; j < dim; j++ {
				newMean[i] += m[i*dim+j] * mean[j]
			}
		}
		mc := make([]float64, dim*dim) // M·cov
		for i := 0; i < dim; i++ {
			for j := 0; j < dim; j++ {
				var v float64
				for l := 0; l < dim; l++ {
					v += m[i*dim+l] * cov[l*dim+j]
				}
				mc[i*dim+j] = v
			}
		}
		for i := 0; i < dim; i++ {
			for j := 0; j < dim; j++ {
				var v float64
				for l := 0; l < dim; l++ {
					v += mc[i*dim+l] * m[j*dim+l]
				}
				for q := 0; q < k; q++ { // G·Gᵀ
					row := x[(1+dim+q)*dim:]
					v += (row[i] - c[i]) * (row[j] - c[j])
				}
				cov[i*dim+j] = v
			}
		}
		mean = newMean
		return nil
	}
	for i := 0; i+1 < len(s.Grid); i++ {
		t, h := s.Grid[i], s.Grid[i]-s.Grid[i+1]
		if err := apply(func(r *run, x []float64, batch int) error { return st.step(r, x, batch, t, h) }); err != nil {
			return nil, nil, fmt.Errorf("sample: moments: step %d: %w", i, err)
		}
	}
	if s.Denoise {
		if err := apply(func(r *run, x []float64, batch int) error { return denoise(r, x, batch) }); err != nil {
			return nil, nil, fmt.Errorf("sample: moments: denoise: %w", err)
		}
	}
	return mean, cov, nil
}

// countNoise supplies zeros and counts the draws per sample.
type countNoise struct{ n int }

func (c *countNoise) fill(dst []float64) {
	clear(dst)
	c.n += len(dst)
}

// probeNoise gives probe row first+k the unit vector e_k over the concatenation of a step's draws.
type probeNoise struct {
	batch, first, offset int
}

func (p *probeNoise) fill(dst []float64) {
	clear(dst)
	w := len(dst) / p.batch
	for r := p.first; r < p.batch; r++ {
		if k := r - p.first - p.offset; k >= 0 && k < w {
			dst[r*w+k] = 1
		}
	}
	p.offset += w
}
