// Package rng is holdgo's one random generator: every seeded stream in the
// project (initialisation, data, times, noise, sampling) is an *RNG, so runs
// reproduce from a seed and resume bit-exactly from a saved state.
package rng

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// RNG is a seeded generator whose streams are fixed by the seed alone: PCG
// (a specified algorithm) for the bits, Box–Muller in float64 for normals,
// so runs reproduce across machines and Go releases.
type RNG struct {
	src   *rand.PCG
	spare float64
	have  bool
}

// New returns a generator for seed.
func New(seed uint64) *RNG { return &RNG{src: rand.NewPCG(seed, 0x9e3779b97f4a7c15)} }

// Uint64 returns 64 random bits.
func (r *RNG) Uint64() uint64 { return r.src.Uint64() }

// Float64 returns a uniform value in [0, 1) with 53 random bits.
func (r *RNG) Float64() float64 { return float64(r.src.Uint64()>>11) / (1 << 53) }

// IntN returns a uniform integer in [0, n).
func (r *RNG) IntN(n int) int {
	if n <= 0 {
		panic("rng: RNG.IntN of a non-positive bound")
	}
	// Lemire's multiply-shift with rejection: unbiased.
	bound := uint64(n)
	for {
		hi, lo := mul64(r.src.Uint64(), bound)
		if lo >= -bound%bound {
			return int(hi)
		}
	}
}

func mul64(a, b uint64) (hi, lo uint64) {
	const mask = 1<<32 - 1
	a0, a1, b0, b1 := a&mask, a>>32, b&mask, b>>32
	w0 := a0 * b0
	t := a1*b0 + w0>>32
	w1, w2 := t&mask, t>>32
	w1 += a0 * b1
	return a1*b1 + w2 + w1>>32, a * b
}

// Normal returns a standard normal value.
func (r *RNG) Normal() float64 {
	if r.have {
		r.have = false
		return r.spare
	}
	u1 := 1 - r.Float64() // (0, 1]: log is finite
	u2 := r.Float64()
	rad := math.Sqrt(-2 * math.Log(u1))
	s, c := math.Sincos(2 * math.Pi * u2)
	r.spare, r.have = rad*s, true
	return rad * c
}

// FillNormal fills dst with mean + std·N(0, 1) draws.
func (r *RNG) FillNormal(dst []float32, mean, std float64) {
	for i := range dst {
		dst[i] = float32(mean + std*r.Normal())
	}
}

// FillUniform fills dst with uniform draws in [lo, hi).
func (r *RNG) FillUniform(dst []float32, lo, hi float64) {
	for i := range dst {
		dst[i] = float32(lo + (hi-lo)*r.Float64())
	}
}

// MarshalBinary saves the generator's exact state (for bit-exact resume).
func (r *RNG) MarshalBinary() ([]byte, error) {
	b, err := r.src.MarshalBinary()
	if err != nil {
		return nil, err
	}
	var flag byte
	if r.have {
		flag = 1
	}
	b = append(b, flag)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(r.spare)), nil
}

// UnmarshalBinary restores a state saved by MarshalBinary.
func (r *RNG) UnmarshalBinary(b []byte) error {
	if len(b) < 9 {
		return errors.New("rng: RNG state too short")
	}
	n := len(b) - 9
	if r.src == nil {
		r.src = rand.NewPCG(0, 0)
	}
	if err := r.src.UnmarshalBinary(b[:n]); err != nil {
		return fmt.Errorf("rng: RNG state: %w", err)
	}
	r.have = b[n] == 1
	r.spare = math.Float64frombits(binary.LittleEndian.Uint64(b[n+1:]))
	return nil
}
