package rng

import "math"

// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as 1, 2, 3", SC11;
// the Random123 library), the counter-based generator cuRAND and JAX use: the n-th block of four
// 32-bit words is a pure function of (key, counter), so any element of a stream can be computed
// on its own — on the host here, or by a GPU thread in kernels/philox.cu, which is this file's
// twin and gives bit-identical streams (cuda's shim test checks it).
//
// A Stream is keyed by the run's seed and addressed by (step, id): the training step and what the
// numbers are for (Stream IDs below). Element i of a stream reads counter (i_lo, i_hi, id, step),
// so a step's noise needs no state from earlier steps: resumed runs draw the same numbers, and a
// run on the GPU draws the same numbers as the same run on the CPU.

const (
	philoxM0 = 0xD2511F53
	philoxM1 = 0xCD9E8D57
	philoxW0 = 0x9E3779B9 // golden ratio
	philoxW1 = 0xBB67AE85 // √3 − 1
)

// Philox4x32 returns the Philox4x32-10 block of counter ctr under key.
func Philox4x32(ctr [4]uint32, key [2]uint32) [4]uint32 {
	for r := 0; r < 10; r++ {
		if r > 0 {
			key[0] += philoxW0
			key[1] += philoxW1
		}
		p0 := uint64(philoxM0) * uint64(ctr[0])
		p1 := uint64(philoxM1) * uint64(ctr[2])
		ctr = [4]uint32{uint32(p1>>32) ^ ctr[1] ^ key[0], uint32(p1), uint32(p0>>32) ^ ctr[3] ^ key[1], uint32(p0)}
	}
	return ctr
}

// Stream IDs: what a stream's numbers are for. Dropout layers use DropoutStream(k) for the k-th
// dropout of a step.
const (
	StreamNoise   uint32 = 1 // training noise ε (B × n·d)
	StreamAux     uint32 = 2 // DSM's auxiliary-block noise
	StreamTimes   uint32 = 3 // training times
	StreamSampler uint32 = 4 // sampler noise (step = sampler step)
	StreamPrior   uint32 = 5 // sampler's initial state
	streamDropout uint32 = 1 << 16
)

// DropoutStream is the stream ID of the k-th dropout mask of a training step.
func DropoutStream(k int) uint32 { return streamDropout + uint32(k) }

// Stream is one Philox stream: Key is the run's seed, Step and ID address the stream.
type Stream struct {
	Key  uint64
	Step uint32
	ID   uint32
}

// Block returns the four words of counter i.
func (s Stream) Block(i uint64) [4]uint32 {
	return Philox4x32([4]uint32{uint32(i), uint32(i >> 32), s.ID, s.Step}, [2]uint32{uint32(s.Key), uint32(s.Key >> 32)})
}

// Float64 returns element i of the stream as a uniform value in [0, 1) with 53 random bits:
// (w0 · 2²¹ + w1 >> 11) · 2⁻⁵³ from counter i's first two words.
func (s Stream) Float64(i uint64) float64 {
	w := s.Block(i)
	return uniform53(w[0], w[1])
}

func uniform53(hi, lo uint32) float64 {
	return float64(uint64(hi)<<21|uint64(lo>>11)) * 0x1p-53
}

// FillUniform sets dst[j] to a uniform float32 in [0, 1) with 24 random bits: word j mod 4 of
// counter j/4, shifted right by 8, times 2⁻²⁴.
func (s Stream) FillUniform(dst []float32) {
	for i := 0; i < len(dst); i += 4 {
		w := s.Block(uint64(i / 4))
		for k := 0; k < 4 && i+k < len(dst); k++ {
			dst[i+k] = float32(w[k]>>8) * 0x1p-24
		}
	}
}

// FillNormal sets dst to standard normal draws: counter j/2 gives two 53-bit uniforms u1 (words
// 0, 1) and u2 (words 2, 3), and Box–Muller gives dst[2j'] = r·cos θ, dst[2j'+1] = r·sin θ with
// r = √(−2 ln(1 − u1)), θ = 2π·u2, evaluated by Log1mUniform and SinCos2Pi in float64 and rounded
// once to float32.
func (s Stream) FillNormal(dst []float32) {
	for i := 0; i < len(dst); i += 2 {
		w := s.Block(uint64(i / 2))
		z0, z1 := BoxMuller(uniform53(w[0], w[1]), uniform53(w[2], w[3]))
		dst[i] = float32(z0)
		if i+1 < len(dst) {
			dst[i+1] = float32(z1)
		}
	}
}

// FillNormalFrom sets dst to elements first, first+1, … of the stream's normal draws: the slice
// [first, first+len(dst)) of what FillNormal writes into a longer buffer, whatever the parity of
// first. A data-parallel rank draws the noise of its part of a global batch with it.
func (s Stream) FillNormalFrom(dst []float32, first uint64) {
	for j := 0; j < len(dst); {
		e := first + uint64(j)
		w := s.Block(e / 2)
		z0, z1 := BoxMuller(uniform53(w[0], w[1]), uniform53(w[2], w[3]))
		if e%2 == 1 {
			dst[j] = float32(z1)
			j++
			continue
		}
		dst[j] = float32(z0)
		if j+1 < len(dst) {
			dst[j+1] = float32(z1)
		}
		j += 2
	}
}

// BoxMuller maps two uniforms in [0, 1) to two independent standard normals:
// r = √(−2 ln(1 − u1)), (r·cos 2πu2, r·sin 2πu2).
//
// The logarithm, sine and cosine are this package's own (polynomials in +, −, ×, ÷ only, each
// rounded: no fused multiply-add, see the float64 conversions) so that the CUDA twin, which uses
// the same operations through __dadd_rn/__dmul_rn, produces the same bits; the math library's
// log, sin and cos differ between Go, glibc and CUDA in the last bit. Their error is below 1e-15
// (tested against math.Log, math.Sincos), far below the float32 rounding of the result.
func BoxMuller(u1, u2 float64) (float64, float64) {
	r := math.Sqrt(-2 * logUnit(1-u1)) // 1 − u1 ∈ (0, 1], exact
	s, c := sinCos2Pi(u2)
	return float64(r * c), float64(r * s)
}

// Polynomial coefficients: ln((1+s)/(1−s)) = 2·Σ s^(2k+1)/(2k+1); sin and cos Taylor series.
var (
	ln2Hi = 6.93147180369123816490e-01 // fdlibm's split of ln 2: ln2Hi·k is exact for |k| < 2¹⁰
	ln2Lo = 1.90821492927058770002e-10
)

// logUnit returns ln(x) for x in (0, 1] (x a multiple of 2⁻⁵³, so x ≥ 2⁻⁵³).
// x = m·2^e with m in [1/√2, √2), ln m = 2·atanh(s), s = (m − 1)/(m + 1), |s| ≤ 0.1716: twelve odd
// terms of the series leave an error below 0.1716²⁵/25 ≈ 1e-21.
func logUnit(x float64) float64 {
	bits := math.Float64bits(x)
	e := int(bits>>52&0x7ff) - 1023
	m := math.Float64frombits(bits&^(0x7ff<<52) | 1023<<52) // [1, 2)
	if m > math.Sqrt2 {
		m = float64(m * 0.5)
		e++
	}
	s := float64(m-1) / float64(m+1)
	s2 := float64(s * s)
	// Horner in s²: Σ_{k=0}^{11} s²ᵏ/(2k+1).
	p := 1.0 / 23
	for k := 10; k >= 0; k-- {
		p = float64(float64(p*s2) + 1/float64(2*k+1))
	}
	lnm := float64(float64(2*s) * p)
	fe := float64(e)
	return float64(float64(fe*ln2Hi) + float64(lnm+float64(fe*ln2Lo)))
}

// sinCos2Pi returns sin(2πu), cos(2πu) for u in [0, 1). The quadrant q = ⌊4u⌋ and the remainder
// f = 4u − q are exact; φ = f·π/2 in [0, π/2) and the Taylor series to φ²¹ (error < 1e-17).
func sinCos2Pi(u float64) (float64, float64) {
	v := u * 4
	q := int(v)
	f := float64(v - float64(q))
	phi := float64(f * (math.Pi / 2))
	p2 := float64(phi * phi)
	// sin φ = φ·Σ (−φ²)ᵏ/(2k+1)!, cos φ = Σ (−φ²)ᵏ/(2k)!, k ≤ 10, Horner from the top.
	sp, cp := 1.0, 1.0
	for k := 10; k >= 1; k-- {
		sp = float64(1 - float64(float64(p2*sp)/float64((2*k)*(2*k+1))))
		cp = float64(1 - float64(float64(p2*cp)/float64((2*k-1)*(2*k))))
	}
	s := float64(phi * sp)
	c := cp
	switch q & 3 {
	case 1:
		s, c = c, -s
	case 2:
		s, c = -s, -c
	case 3:
		s, c = -c, s
	}
	return s, c
}

// DropoutKeep is the factor inverted dropout gives the kept elements: float32(1/(1−p)).
func DropoutKeep(p float64) float32 { return float32(1 / (1 - p)) }

// Dropout sets y = x·mask with mask_j = DropoutKeep(p) where uniform j of the stream
// (FillUniform's element j) is ≥ float32(p), else 0. y may be x.
func (s Stream) Dropout(y, x []float32, p float64) { s.DropoutFrom(y, x, p, 0) }

// DropoutFrom is Dropout with the mask's elements first, first+1, …: the slice of a longer
// tensor's mask that starts at element first (a data-parallel rank's samples of a batch).
func (s Stream) DropoutFrom(y, x []float32, p float64, first uint64) {
	keep, pf := DropoutKeep(p), float32(p)
	var w [4]uint32
	for j := range x {
		e := first + uint64(j)
		if j == 0 || e%4 == 0 {
			w = s.Block(e / 4)
		}
		if float32(w[e%4]>>8)*0x1p-24 >= pf {
			y[j] = x[j] * keep
		} else {
			y[j] = 0
		}
	}
}
