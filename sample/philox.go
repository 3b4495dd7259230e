package sample

import (
	"holdgo/hold"
	"holdgo/rng"
)

// The sampler's random numbers come from counter-based Philox streams (package rng) keyed by the
// chunk's seed: the prior from stream StreamPrior, and the k-th noise draw of the run (a method's
// k-th call for noise) from stream StreamSampler at step k. The CUDA sampler (device.go) draws the
// same float32 normals on the device, so a run on cuda and the same run on cpu see the same noise.

// philoxNoise is the noise source of a chunk: each fill draws the next stream's float32 normals
// (widened to float64).
type philoxNoise struct {
	key  uint64
	next uint32
	buf  []float32
}

func (p *philoxNoise) fill(dst []float64) {
	if cap(p.buf) < len(dst) {
		p.buf = make([]float32, len(dst))
	}
	b := p.buf[:len(dst)]
	rng.Stream{Key: p.key, Step: p.next, ID: rng.StreamSampler}.FillNormal(b)
	p.next++
	for i, v := range b {
		dst[i] = float64(v)
	}
}

// philoxPrior sets x (batch × n·d) to prior draws: block k of every sample is PriorStd(k) times
// the float32 normals of the chunk's prior stream (element b·n·d + k·d + i).
func philoxPrior(sde *hold.SDE, x []float64, batch int, key uint64) {
	z := make([]float32, len(x))
	rng.Stream{Key: key, ID: rng.StreamPrior}.FillNormal(z)
	n := sde.Blocks()
	d := len(x) / (batch * n)
	for b := range batch {
		for k := range n {
			std := sde.PriorStd(k)
			for i := range d {
				j := b*n*d + k*d + i
				x[j] = std * float64(z[j])
			}
		}
	}
}
