package restore

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// Operator is a linear measurement operator A on one image of d = C·H·W values (channel-major, row
// by row), with its singular value decomposition A = U diag(s) V_rᵀ in the form every task here has:
// m measurements, A of full row rank m, U orthogonal m×m, V_r the d×m orthonormal basis of A's row
// space. A⁺ = V_r diag(1/s) Uᵀ and (a·AAᵀ + b·I)⁻¹ = U diag(1/(a s² + b)) Uᵀ follow from it (Pinv,
// SolveGram); Apply and Adjoint are the plain operator, checked against the decomposition in the tests.
type Operator interface {
	Dim() int  // d
	Rows() int // m
	// Apply writes y = A x (m values).
	Apply(y, x []float64)
	// Adjoint writes x = Aᵀ y (d values).
	Adjoint(x, y []float64)
	// Singular returns s (m values, positive; not to be modified).
	Singular() []float64
	// ToRange writes v = V_rᵀ x (m values): x's coordinates in A's row space.
	ToRange(v, x []float64)
	// FromRange writes x = V_r v (d values).
	FromRange(x, v []float64)
	// UT writes v = Uᵀ y (m values).
	UT(v, y []float64)
}

// Pinv writes x = A⁺ y = V_r diag(1/s) Uᵀ y (d values).
func Pinv(op Operator, x, y []float64) {
	v := make([]float64, op.Rows())
	op.UT(v, y)
	for j, s := range op.Singular() {
		v[j] /= s
	}
	op.FromRange(x, v)
}

// SolveGram writes x = (a·AAᵀ + b·I)⁻¹ v (m values) = U diag(1/(a s_j² + b)) Uᵀ v; a s² + b must be
// positive.
func SolveGram(op Operator, x, v []float64, a, b float64) {
	m := op.Rows()
	w := make([]float64, m)
	op.UT(w, v)
	for j, s := range op.Singular() {
		w[j] /= a*s*s + b
	}
	// x = U w = (Uᵀ)ᵀ w: every U here is given through Uᵀ; U w is the adjoint of UT.
	uMul(op, x, w)
}

// uMul writes y = U w. Masks, pooling and the identity have U = I; the blur has U = U₁⊗U₁ per channel.
func uMul(op Operator, y, w []float64) {
	if u, ok := op.(interface{ U(y, w []float64) }); ok {
		u.U(y, w)
		return
	}
	copy(y, w)
}

// Mask keeps the pixels listed in Known (indices into the image, ascending), the same in every channel
// when the image has several: A selects them, Aᵀ puts them back with zeros elsewhere, A⁺ = Aᵀ, s = 1,
// U = I, V_r = Aᵀ.
type Mask struct {
	D     int
	Known []int
	ones  []float64
}

// NewMask returns the mask operator of an image of d values that measures the pixels known
// (ascending, distinct, in [0, d)).
func NewMask(d int, known []int) (*Mask, error) {
	for j, k := range known {
		if k < 0 || k >= d || (j > 0 && k <= known[j-1]) {
			return nil, fmt.Errorf("restore: mask index %d (position %d) is not ascending within [0, %d)", k, j, d)
		}
	}
	if len(known) == 0 {
		return nil, fmt.Errorf("restore: the mask measures no pixel")
	}
	ones := make([]float64, len(known))
	for j := range ones {
		ones[j] = 1
	}
	return &Mask{D: d, Known: known, ones: ones}, nil
}

func (o *Mask) Dim() int  { return o.D }
func (o *Mask) Rows() int { return len(o.Known) }

func (o *Mask) Apply(y, x []float64) {
	for j, k := range o.Known {
		y[j] = x[k]
	}
}

func (o *Mask) Adjoint(x, y []float64) {
	clear(x[:o.D])
	for j, k := range o.Known {
		x[k] = y[j]
	}
}

func (o *Mask) Singular() []float64      { return o.ones }
func (o *Mask) ToRange(v, x []float64)   { o.Apply(v, x) }
func (o *Mask) FromRange(x, v []float64) { o.Adjoint(x, v) }
func (o *Mask) UT(v, y []float64)        { copy(v, y[:len(o.Known)]) }

// Pool is f×f average pooling of a C×H×W image (H, W multiples of f): y is C×(H/f)×(W/f), each value
// the mean of its block. Row i of A is 1/f² on block i, so A = (1/f)·V_rᵀ with V_r's column i equal to
// 1/f on block i: s = 1/f, U = I, and A⁺ y replicates each value over its block.
type Pool struct {
	C, H, W, F int
	sing       []float64
}

// NewPool returns f×f average pooling of C×H×W images.
func NewPool(c, h, w, f int) (*Pool, error) {
	if c < 1 || f < 1 || h < f || w < f || h%f != 0 || w%f != 0 {
		return nil, fmt.Errorf("restore: %d×%d pooling of %d×%d×%d images: the size must be a multiple of the factor", f, f, c, h, w)
	}
	m := c * (h / f) * (w / f)
	s := make([]float64, m)
	for j := range s {
		s[j] = 1 / float64(f)
	}
	return &Pool{C: c, H: h, W: w, F: f, sing: s}, nil
}

func (o *Pool) Dim() int  { return o.C * o.H * o.W }
func (o *Pool) Rows() int { return len(o.sing) }

// blockSum writes the sum of each block times scale.
func (o *Pool) blockSum(y, x []float64, scale float64) {
	h, w := o.H/o.F, o.W/o.F
	for c := range o.C {
		for i := range h {
			for j := range w {
				var s float64
				for a := range o.F {
					row := x[(c*o.H+i*o.F+a)*o.W+j*o.F:]
					for b := range o.F {
						s += row[b]
					}
				}
				y[(c*h+i)*w+j] = s * scale
			}
		}
	}
}

// spread writes x = v times scale replicated over each block.
func (o *Pool) spread(x, v []float64, scale float64) {
	h, w := o.H/o.F, o.W/o.F
	for c := range o.C {
		for r := range o.H {
			for col := range o.W {
				x[(c*o.H+r)*o.W+col] = v[(c*h+r/o.F)*w+col/o.F] * scale
			}
		}
	}
}

func (o *Pool) Apply(y, x []float64)     { o.blockSum(y, x, 1/float64(o.F*o.F)) }
func (o *Pool) Adjoint(x, y []float64)   { o.spread(x, y, 1/float64(o.F*o.F)) }
func (o *Pool) Singular() []float64      { return o.sing }
func (o *Pool) ToRange(v, x []float64)   { o.blockSum(v, x, 1/float64(o.F)) }
func (o *Pool) FromRange(x, v []float64) { o.spread(x, v, 1/float64(o.F)) }
func (o *Pool) UT(v, y []float64)        { copy(v, y[:len(o.sing)]) }

// Identity is A = I (denoising).
type Identity struct {
	D    int
	ones []float64
}

// NewIdentity returns A = I on images of d values.
func NewIdentity(d int) *Identity {
	ones := make([]float64, d)
	for j := range ones {
		ones[j] = 1
	}
	return &Identity{D: d, ones: ones}
}

func (o *Identity) Dim() int                 { return o.D }
func (o *Identity) Rows() int                { return o.D }
func (o *Identity) Apply(y, x []float64)     { copy(y, x[:o.D]) }
func (o *Identity) Adjoint(x, y []float64)   { copy(x, y[:o.D]) }
func (o *Identity) Singular() []float64      { return o.ones }
func (o *Identity) ToRange(v, x []float64)   { copy(v, x[:o.D]) }
func (o *Identity) FromRange(x, v []float64) { copy(x, v[:o.D]) }
func (o *Identity) UT(v, y []float64)        { copy(v, y[:o.D]) }

// BlurTaps is the length of the Gaussian blur's kernel (±3 pixels).
const BlurTaps = 7

// Blur is a separable Gaussian blur of C×H×W images with square H = W: each channel X ↦ K X Kᵀ with
// the H×H matrix K_ij = g(i − j), g the 7-tap Gaussian of standard deviation σ_b normalised to sum 1,
// and zero padding (taps that fall outside the image are dropped, so K is symmetric Toeplitz). K is
// symmetric, K = Q Λ Qᵀ (gonum's symmetric eigendecomposition of one H×H matrix), so its SVD is
// K = U₁ diag(|λ|) V₁ᵀ with V₁ = Q and U₁ = Q·sign(λ); A = K⊗K per channel has U = U₁⊗U₁,
// V = V₁⊗V₁ and s_{ab} = |λ_a||λ_b|. Every s is positive for σ_b ≤ 3 (the blur is invertible but
// ill-conditioned: s ranges over about 10⁻⁴…1 at σ_b = 1, H = 28), which is why deblurring needs σ_y > 0.
type Blur struct {
	C, H  int
	Sigma float64
	k     []float64 // K, H×H row-major
	v1    []float64 // V₁ = Q, H×H row-major: column a is eigenvector a
	u1    []float64 // U₁ = Q·sign(λ)
	sing  []float64 // C×H×H: s_{ab} = |λ_a||λ_b|
}

// NewBlur returns the Gaussian blur of standard deviation sigma (pixels) on C×H×H images.
func NewBlur(c, h int, sigma float64) (*Blur, error) {
	if c < 1 || h < 1 || !(sigma > 0) || sigma > 3 {
		return nil, fmt.Errorf("restore: blur of %d×%d×%d images with σ_b = %g: want σ_b in (0, 3]", c, h, h, sigma)
	}
	taps := make([]float64, BlurTaps)
	var sum float64
	for i := range taps {
		x := float64(i - BlurTaps/2)
		taps[i] = math.Exp(-0.5 * x * x / (sigma * sigma))
		sum += taps[i]
	}
	o := &Blur{C: c, H: h, Sigma: sigma, k: make([]float64, h*h), v1: make([]float64, h*h), u1: make([]float64, h*h)}
	for i := range h {
		for j := range h {
			if off := j - i + BlurTaps/2; off >= 0 && off < BlurTaps {
				o.k[i*h+j] = taps[off] / sum
			}
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(mat.NewSymDense(h, append([]float64(nil), o.k...)), true) {
		return nil, fmt.Errorf("restore: blur: the eigendecomposition of the %d×%d kernel matrix failed", h, h)
	}
	lam := eig.Values(nil)
	var q mat.Dense
	eig.VectorsTo(&q)
	abs := make([]float64, h)
	for a := range h {
		abs[a] = math.Abs(lam[a])
		if !(abs[a] > 0) {
			return nil, fmt.Errorf("restore: blur with σ_b = %g is singular on %d pixels", sigma, h)
		}
		sign := 1.0
		if lam[a] < 0 {
			sign = -1
		}
		for i := range h {
			o.v1[i*h+a] = q.At(i, a)
			o.u1[i*h+a] = sign * q.At(i, a)
		}
	}
	o.sing = make([]float64, c*h*h)
	for ch := range c {
		for a := range h {
			for b := range h {
				o.sing[(ch*h+a)*h+b] = abs[a] * abs[b]
			}
		}
	}
	return o, nil
}

// sandwich writes Y = Lᵀ X R per channel, or L X Rᵀ when !transposed (H×H matrices, row-major).
func (o *Blur) sandwich(y, x, l []float64, transposed bool) {
	h := o.H
	tmp := make([]float64, h*h)
	at := func(i, j int) float64 { // element (i, j) of L or Lᵀ
		if transposed {
			return l[j*h+i]
		}
		return l[i*h+j]
	}
	for c := range o.C {
		xc, yc := x[c*h*h:(c+1)*h*h], y[c*h*h:(c+1)*h*h]
		for i := range h { // tmp = op(L) X
			for j := range h {
				var s float64
				for k := range h {
					s += at(i, k) * xc[k*h+j]
				}
				tmp[i*h+j] = s
			}
		}
		for i := range h { // Y = tmp op(L)ᵀ
			for j := range h {
				var s float64
				for k := range h {
					s += tmp[i*h+k] * at(j, k)
				}
				yc[i*h+j] = s
			}
		}
	}
}

func (o *Blur) Dim() int                 { return o.C * o.H * o.H }
func (o *Blur) Rows() int                { return o.C * o.H * o.H }
func (o *Blur) Apply(y, x []float64)     { o.sandwich(y, x, o.k, false) }
func (o *Blur) Adjoint(x, y []float64)   { o.sandwich(x, y, o.k, true) }
func (o *Blur) Singular() []float64      { return o.sing }
func (o *Blur) ToRange(v, x []float64)   { o.sandwich(v, x, o.v1, true) }
func (o *Blur) FromRange(x, v []float64) { o.sandwich(x, v, o.v1, false) }
func (o *Blur) UT(v, y []float64)        { o.sandwich(v, y, o.u1, true) }

// U writes y = U w (U = U₁⊗U₁ per channel).
func (o *Blur) U(y, w []float64) { o.sandwich(y, w, o.u1, false) }
