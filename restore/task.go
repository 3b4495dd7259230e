package restore

import (
	"fmt"
	"math"

	"holdgo/rng"
	"holdgo/sample"
)

// Philox stream IDs of a restoration run, beside rng's (StreamPrior 5 keys the prior states, as in
// package sample). Every stream of image i is keyed by sample.ChunkSeed(seed, i), so an image's mask,
// measurement and samples do not depend on the batch, the order or the number of images in a run.
const (
	StreamMask        uint32 = 0x7e01 // inpaint-random's pixel mask and inpaint-box's random position
	StreamMeasurement uint32 = 0x7e02 // the measurement noise n of y = A q0 + σ_y n
	StreamMethod      uint32 = 0x7e03 // the method's noise (solver steps, DDNM+, replacement ξ, RePaint), step = draw
)

// Task names.
const (
	TaskInpaintBox    = "inpaint-box"
	TaskInpaintRandom = "inpaint-random"
	TaskSR2           = "sr2"
	TaskSR4           = "sr4"
	TaskDeblur        = "deblur-gauss"
	TaskDenoise       = "denoise"
	TaskInpaintMask   = "inpaint-mask" // a mask given pixel by pixel (Task.Mask; holdctl serve's drawn mask)
)

// Box positions of inpaint-box.
const (
	BoxCenter = "center"
	BoxRandom = "random"
)

// Task is a degradation: which operator, its parameters, and the measurement noise σ_y (in the data's
// units, [−1, 1] for images).
type Task struct {
	Name      string
	C, H, W   int     // image shape
	Box       int     // inpaint-box: side of the missing square
	BoxPos    string  // inpaint-box: BoxCenter or BoxRandom
	Drop      float64 // inpaint-random: probability that a pixel is missing, in (0, 1)
	BlurSigma float64 // deblur-gauss: σ_b in pixels
	Noise     float64 // σ_y ≥ 0
	// Mask is inpaint-mask's mask, true where the pixel is known (measured): H·W values row by row,
	// applied to every channel, or C·H·W values channel-major. At least one pixel must be known and
	// one missing.
	Mask []bool
}

// Check reports the first parameter that makes the task impossible, in one line.
func (t Task) Check() error {
	if t.C < 1 || t.H < 1 || t.W < 1 {
		return fmt.Errorf("restore: image shape %d×%d×%d", t.C, t.H, t.W)
	}
	if !(t.Noise >= 0) || math.IsInf(t.Noise, 0) {
		return fmt.Errorf("restore: measurement noise σ_y = %g, want a finite value ≥ 0", t.Noise)
	}
	switch t.Name {
	case TaskInpaintBox:
		if t.Box < 1 || t.Box > t.H || t.Box > t.W || (t.Box == t.H && t.Box == t.W) {
			return fmt.Errorf("restore: a %d×%d box does not fit inside a %d×%d image with pixels left to measure", t.Box, t.Box, t.H, t.W)
		}
		if t.BoxPos != BoxCenter && t.BoxPos != BoxRandom {
			return fmt.Errorf("restore: box position %q, want %s or %s", t.BoxPos, BoxCenter, BoxRandom)
		}
	case TaskInpaintRandom:
		if !(t.Drop > 0 && t.Drop < 1) {
			return fmt.Errorf("restore: drop probability %g, want it in (0, 1)", t.Drop)
		}
	case TaskSR2, TaskSR4:
		f := t.factor()
		if t.H%f != 0 || t.W%f != 0 {
			return fmt.Errorf("restore: %s needs image sides that are multiples of %d, got %d×%d", t.Name, f, t.H, t.W)
		}
	case TaskDeblur:
		if t.H != t.W {
			return fmt.Errorf("restore: deblur-gauss needs square images, got %d×%d", t.H, t.W)
		}
		if !(t.BlurSigma > 0 && t.BlurSigma <= 3) {
			return fmt.Errorf("restore: blur σ_b = %g, want it in (0, 3]", t.BlurSigma)
		}
		if !(t.Noise > 0) {
			return fmt.Errorf("restore: deblur-gauss needs measurement noise σ_y > 0 (noiseless, A⁺y inverts the blur)")
		}
	case TaskDenoise:
		if !(t.Noise > 0) {
			return fmt.Errorf("restore: denoise needs measurement noise σ_y > 0")
		}
	case TaskInpaintMask:
		if n := len(t.Mask); n != t.H*t.W && n != t.Dim() {
			return fmt.Errorf("restore: inpaint-mask needs a mask of %d×%d = %d pixels (or %d values, one per channel), got %d",
				t.H, t.W, t.H*t.W, t.Dim(), n)
		}
		known := 0
		for _, k := range t.Mask {
			if k {
				known++
			}
		}
		if known == 0 || known == len(t.Mask) {
			return fmt.Errorf("restore: the mask of inpaint-mask has %d known pixels of %d: want at least one known and one missing", known, len(t.Mask))
		}
	default:
		return fmt.Errorf("restore: unknown task %q (want %s, %s, %s, %s, %s, %s or %s)", t.Name,
			TaskInpaintBox, TaskInpaintRandom, TaskSR2, TaskSR4, TaskDeblur, TaskDenoise, TaskInpaintMask)
	}
	return nil
}

func (t Task) factor() int {
	if t.Name == TaskSR4 {
		return 4
	}
	return 2
}

// Dim returns d = C·H·W.
func (t Task) Dim() int { return t.C * t.H * t.W }

// Operator returns the operator of image i of a run seeded with seed (the mask of inpaint-random and
// the position of a random box come from stream StreamMask of image i; the other tasks do not depend
// on the image; inpaint-mask's is Mask).
func (t Task) Operator(seed uint64, image int) (Operator, error) {
	if err := t.Check(); err != nil {
		return nil, err
	}
	d := t.Dim()
	st := rng.Stream{Key: sample.ChunkSeed(seed, image), ID: StreamMask}
	switch t.Name {
	case TaskInpaintBox:
		top, left := (t.H-t.Box)/2, (t.W-t.Box)/2
		if t.BoxPos == BoxRandom {
			top = int(st.Float64(0) * float64(t.H-t.Box+1))
			left = int(st.Float64(1) * float64(t.W-t.Box+1))
		}
		return NewMask(d, t.pixels(func(r, c int) bool {
			return r < top || r >= top+t.Box || c < left || c >= left+t.Box
		}))
	case TaskInpaintRandom:
		known := t.pixels(func(r, c int) bool { return st.Float64(uint64(r*t.W+c)) >= t.Drop })
		if len(known) == 0 { // every pixel dropped: keep the first, so that A has a row
			known = t.pixels(func(r, c int) bool { return r == 0 && c == 0 })
		}
		return NewMask(d, known)
	case TaskInpaintMask:
		if len(t.Mask) == d {
			var known []int
			for j, k := range t.Mask {
				if k {
					known = append(known, j)
				}
			}
			return NewMask(d, known)
		}
		return NewMask(d, t.pixels(func(r, c int) bool { return t.Mask[r*t.W+c] }))
	case TaskSR2, TaskSR4:
		return NewPool(t.C, t.H, t.W, t.factor())
	case TaskDeblur:
		return NewBlur(t.C, t.H, t.BlurSigma)
	}
	return NewIdentity(d), nil
}

// pixels lists the indices, over all channels, of the pixels (r, c) where keep holds.
func (t Task) pixels(keep func(r, c int) bool) []int {
	var out []int
	for ch := range t.C {
		for r := range t.H {
			for c := range t.W {
				if keep(r, c) {
					out = append(out, (ch*t.H+r)*t.W+c)
				}
			}
		}
	}
	return out
}

// Measure returns y = A q0 + σ_y n for image i of a run seeded with seed, n the float32 normals of
// stream StreamMeasurement of image i (widened to float64).
func Measure(op Operator, q0 []float64, sigmaY float64, seed uint64, image int) []float64 {
	y := make([]float64, op.Rows())
	op.Apply(y, q0)
	if sigmaY > 0 {
		n := make([]float32, len(y))
		rng.Stream{Key: sample.ChunkSeed(seed, image), ID: StreamMeasurement}.FillNormal(n)
		for j := range y {
			y[j] += sigmaY * float64(n[j])
		}
	}
	return y
}
