package sample

import (
	"fmt"
	"sync"

	"holdgo/internal/parallel"
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
	return s.chunks(n, seed, 1, emit, func(x []float64, batch int, key uint64) (int, error) {
		philoxPrior(s.SDE, x, batch, key)
		nfe, _, err := s.run(x, batch, &philoxNoise{key: key})
		return nfe, err
	})
}

// chunks is the one chunk loop of Each and EachOn: chunks of MaxBatch samples, chunk c drawn by
// run from the generator ChunkSeed(seed, c) into x (batch × n·d, the final states), counted and
// handed to emit in order. With workers > 1 it runs that many chunks at a time, each on its own
// goroutine and buffer (run must then be safe for concurrent use), and emits them in order once the
// wave is done: the same samples as one worker, in workers × MaxBatch rows of memory. A chunk's error
// is the first in chunk order.
func (s *Sampler) chunks(n int, seed uint64, workers int, emit func(first int, x []float64) error,
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
	chunks := (n + maxBatch - 1) / maxBatch
	bufs := make([][]float64, max(1, min(workers, chunks)))
	for k := range bufs {
		bufs[k] = make([]float64, min(n, maxBatch)*row)
	}
	nfes, errs := make([]int, len(bufs)), make([]error, len(bufs))
	for c0 := 0; c0 < chunks; c0 += len(bufs) {
		wave := min(len(bufs), chunks-c0)
		do := func(k int) {
			c := c0 + k
			batch := min(n-c*maxBatch, maxBatch)
			nfes[k], errs[k] = run(bufs[k][:batch*row], batch, ChunkSeed(seed, c))
		}
		if wave == 1 {
			do(0)
		} else {
			var wg sync.WaitGroup
			for k := range wave {
				parallel.Go(&wg, func() { do(k) })
			}
			wg.Wait()
		}
		for k := range wave {
			if errs[k] != nil {
				return res, errs[k]
			}
			c := c0 + k
			lo := c * maxBatch
			batch := min(n-lo, maxBatch)
			xs := bufs[k][:batch*row]
			res.NFE = max(res.NFE, nfes[k])
			for i := range batch {
				if Diverged(xs[i*row : (i+1)*row]) {
					res.Diverged++
				}
			}
			if err := emit(lo, xs); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
