package tensor

import "holdgo/rng"

// RNG is the project's seeded generator (package rng).
type RNG = rng.RNG

// NewRNG returns a generator for seed.
//
// Deprecated: use rng.New, the one constructor; NewRNG stays for the tests that still call it.
func NewRNG(seed uint64) *RNG { return rng.New(seed) }

// RandN returns a host tensor of standard normal draws.
func RandN(r *RNG, shape ...int) *Tensor {
	t := Zeros(shape...)
	r.FillNormal(t.data, 0, 1)
	return t
}

// RandU returns a host tensor of uniform draws in [lo, hi).
func RandU(r *RNG, lo, hi float64, shape ...int) *Tensor {
	t := Zeros(shape...)
	r.FillUniform(t.data, lo, hi)
	return t
}
