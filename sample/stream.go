package sample

import (
	"fmt"
)

// StreamResult is the cost of a streamed run (Each).
type StreamResult struct {
	NFE      int // the largest NFE over chunks
	Diverged int // samples Diverged rejects
}

// Each draws n samples chunk by chunk, exactly as Sample draws them (the
// same chunks of MaxBatch, the same generator per chunk), and hands each
// chunk's final states to emit in order — first is the index of its first
// sample — instead of keeping them, so any n runs in the memory of one
// chunk. Chunks run serially; Record is not supported.
func (s *Sampler) Each(n int, seed uint64, emit func(first int, x []float64) error) (StreamResult, error) {
	if err := s.validate(); err != nil {
		return StreamResult{}, err
	}
	if len(s.Record) > 0 {
		return StreamResult{}, fmt.Errorf("sample: Each does not record trajectories")
	}
	return s.chunks(n, seed, emit, func(x []float64, batch int, key uint64) (int, error) {
		philoxPrior(s.SDE, x, batch, key)
		nfe, _, err := s.run(x, batch, &philoxNoise{key: key})
		return nfe, err
	})
}

// chunks is the one chunk loop of Each and EachOn: chunks of MaxBatch samples, chunk c drawn by
// run from the generator ChunkSeed(seed, c) into x (batch × n·d, the final states), counted and
// handed to emit in order.
func (s *Sampler) chunks(n int, seed uint64, emit func(first int, x []float64) error,
	run func(x []float64, batch int, key uint64) (int, error)) (StreamResult, error) {
	var res StreamResult
	if n < 1 {
		return res, fmt.Errorf("sample: want at least one sample, got %d", n)
	}
	maxBatch := s.MaxBatch
	if maxBatch == 0 {
		maxBatch = DefaultMaxBatch
	}
	row := s.SDE.Blocks() * s.Dim
	x := make([]float64, min(n, maxBatch)*row)
	for c := 0; c*maxBatch < n; c++ {
		lo := c * maxBatch
		batch := min(n-lo, maxBatch)
		xs := x[:batch*row]
		nfe, err := run(xs, batch, ChunkSeed(seed, c))
		if err != nil {
			return res, err
		}
		res.NFE = max(res.NFE, nfe)
		for i := range batch {
			if Diverged(xs[i*row : (i+1)*row]) {
				res.Diverged++
			}
		}
		if err := emit(lo, xs); err != nil {
			return res, err
		}
	}
	return res, nil
}
