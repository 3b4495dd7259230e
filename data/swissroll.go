package data

import (
	"fmt"
	"math"

	"holdgo/tensor"
)

// NameSwissRoll is the name of the paper's 2-D multi Swiss roll (see Open).
const NameSwissRoll = "swissroll"

// DefaultSwissNoise is the noise of the paper's appendix ("make_swiss_roll
// with noise of 0.02"). The CLD-SGM code the paper builds on used 0.2.
const DefaultSwissNoise = 0.02

// SwissRoll is a mixture of equally weighted 2-D Swiss rolls, each
// sklearn's make_swiss_roll projected to its (x, z) plane, scaled and moved
// to a centre:
//
//	t = 1.5π(1 + 2U),  U ~ Uniform[0, 1)
//	point = centre + Scale·(t cos t + Noise·n₁, t sin t + Noise·n₂),  n ~ N(0, I)
//
// The noise is added before scaling, as make_swiss_roll adds it, so the
// paper's Noise 0.02 with Scale 0.01 moves points by about 2e-4. Centres are
// in the scaled coordinates.
type SwissRoll struct {
	Noise   float64
	Scale   float64
	Centers [][2]float64
}

// PaperSwissRoll returns the paper's data (Appendix "Generate Data from 2D
// Multi-Swiss Rolls"): five rolls, one at the origin and four at
// (±0.8, ±0.8), scale 0.01, noise DefaultSwissNoise.
func PaperSwissRoll() SwissRoll {
	return SwissRoll{
		Noise: DefaultSwissNoise,
		Scale: 0.01,
		Centers: [][2]float64{
			{0, 0}, {0.8, 0.8}, {0.8, -0.8}, {-0.8, -0.8}, {-0.8, 0.8},
		},
	}
}

// Validate reports whether the fields describe a distribution.
func (s SwissRoll) Validate() error {
	switch {
	case !(s.Noise >= 0) || math.IsInf(s.Noise, 0):
		return fmt.Errorf("swiss roll: noise %v (want ≥ 0)", s.Noise)
	case !(s.Scale > 0) || math.IsInf(s.Scale, 0):
		return fmt.Errorf("swiss roll: scale %v (want > 0)", s.Scale)
	case len(s.Centers) == 0:
		return fmt.Errorf("swiss roll: no centres")
	}
	return nil
}

// Dimension implements Source: 2.
func (s SwissRoll) Dimension() int { return 2 }

// Name implements Source.
func (s SwissRoll) Name() string { return NameSwissRoll }

// Sample implements Source. Each point takes, in order, rng.IntN(len(Centers))
// for its roll, one Float64 for t and two Normals for the noise.
func (s SwissRoll) Sample(rng *tensor.RNG, dst []float32) {
	if err := s.Validate(); err != nil {
		panic("data: " + err.Error())
	}
	checkDst(NameSwissRoll, dst, 2)
	for row := 0; row < len(dst); row += 2 {
		c := s.Centers[rng.IntN(len(s.Centers))]
		t := 1.5 * math.Pi * (1 + 2*rng.Float64())
		n1, n2 := rng.Normal(), rng.Normal()
		sin, cos := math.Sincos(t)
		dst[row] = float32(c[0] + s.Scale*(t*cos+s.Noise*n1))
		dst[row+1] = float32(c[1] + s.Scale*(t*sin+s.Noise*n2))
	}
}

// Roll returns the index of the roll whose centre is nearest to (x, y). For the paper's data it is
// the roll a point was drawn from: a roll reaches at most Scale·(4.5π + a few Noise) ≈ 0.14 from its
// centre, and the centres are 0.8 or more apart.
func (s SwissRoll) Roll(x, y float64) int {
	best, bd := 0, math.Inf(1)
	for i, c := range s.Centers {
		if d := (x-c[0])*(x-c[0]) + (y-c[1])*(y-c[1]); d < bd {
			best, bd = i, d
		}
	}
	return best
}
