// Package vec holds SIMD kernels for the memory-bound element-wise paths of
// training on []float32: activations (Exp, Sigmoid, SiLU and its gradient,
// Tanh), arithmetic (Add, Sub, Mul, Scale, AddScalar, AddScaled, Acc, Axpy,
// Affine64),
// reductions (Sum, Sum64, SumSquares, SumSqDev, SumDotDev), the fused optimizer updates
// (Adam, EMA) and Mix/Mix64, a small matrix applied across rows (the HOLD
// reparameterisation and the sampler's Lie–Trotter step).
//
// Every kernel has a plain-Go reference in ref.go that the tests compare it
// with. The instruction-set level (AVX-512, AVX2 or plain Go) is the one
// internal/isa chose at start-up; isa.Set (or HOLDGO_ISA) switches it for
// every SIMD package at once, and -tags noasm builds only the Go kernels.
//
// Slices passed together must have equal lengths (the functions panic
// otherwise). dst may be the same slice as an input (dst == x, dst == a ==
// b), but must not partially overlap one.
//
// Accuracy (see the tests for the measured maxima): the arithmetic kernels
// and Adam/EMA perform the reference's float32 operations in the same order,
// unfused, so they are bit-identical to it; the transcendental ones are
// within a few ulp of float64 math rounded to float32, special values
// included; Sum and SumSquares accumulate in float64.
package vec

import (
	"fmt"

	"holdgo/internal/isa"
)

//go:generate go run asm_gen.go

// impl is one instruction-set level's kernels; lengths are checked by the
// callers, and n = len of the first slice.
type impl struct {
	level                    string
	exp, sigmoid, silu, tanh func(dst, x []float32)
	siluGrad                 func(dst, x, dy []float32)
	add, sub, mul            func(dst, a, b []float32)
	scale, addScalar         func(dst, a []float32, s float32)
	addScaled                func(dst, a, b []float32, s float32)
	ema                      func(shadow, params []float32, k float32)
	adam                     func(params, grads, m, v []float32, b1, c1, b2, c2, step, sqrtBC2, eps float32)
	sum, sumSquares          func(x []float32) float64
	sumSqDev                 func(x []float32, m float64) float64
	sumDotDev                func(dy, x []float32, m float64) (sum, dot float64)
	affine64                 func(dst, x []float32, a, c float64)
	sin64                    func(dst, x []float32) (outside bool)
	// f64Lanes is the number of float64 lanes of a vector: the element
	// multiple the mix and sumSqDev kernels handle (0: no kernels, the Go
	// loops do everything); mix32Kernel / mix64Kernel run the level's
	// Mix kernels.
	f64Lanes int
}

// f64Body is how many of n elements a float64-lane kernel takes (a multiple
// of the level's float64 lanes; none when the level has no such kernel): the
// Go reference does the rest.
func (k *impl) f64Body(n int, kernel bool) int {
	if !kernel {
		return 0
	}
	return n - n%k.f64Lanes
}

// active is the level isa has chosen.
func active() *impl {
	if k := archImpl(isa.Level()); k != nil {
		return k
	}
	return &genericImpl
}

func same(op string, n int, others ...[]float32) {
	for _, o := range others {
		if len(o) != n {
			panic(fmt.Sprintf("vec.%s: slice lengths differ (%d and %d)", op, n, len(o)))
		}
	}
}

// Exp sets dst[i] = e^x[i].
func Exp(dst, x []float32) { same("Exp", len(dst), x); active().exp(dst, x) }

// Sigmoid sets dst[i] = 1/(1 + e^-x[i]).
func Sigmoid(dst, x []float32) { same("Sigmoid", len(dst), x); active().sigmoid(dst, x) }

// SiLU sets dst[i] = x[i]·σ(x[i]); SiLU(-Inf) = -0, its limit.
func SiLU(dst, x []float32) { same("SiLU", len(dst), x); active().silu(dst, x) }

// SiLUGrad sets dst[i] = dy[i]·σ(x)·(1 + x·(1 - σ(x))), x = x[i], the
// gradient of SiLU; at x = ±Inf it takes the limits dy·1 and dy·0. Near the
// zero of silu' (x ≈ -1.2785), where 1 + x·(1-σ) cancels, a local
// polynomial keeps the error at a few ulp. Domain: |dy| < 1e26 (beyond, x
// below -170 is treated as -170, and an intermediate may overflow), and
// dy = ±Inf at x = -Inf gives ±Inf where float64 math gives NaN.
func SiLUGrad(dst, x, dy []float32) {
	same("SiLUGrad", len(dst), x, dy)
	active().siluGrad(dst, x, dy)
}

// Tanh sets dst[i] = tanh(x[i]).
func Tanh(dst, x []float32) { same("Tanh", len(dst), x); active().tanh(dst, x) }

// Add sets dst[i] = a[i] + b[i].
func Add(dst, a, b []float32) { same("Add", len(dst), a, b); active().add(dst, a, b) }

// Sub sets dst[i] = a[i] - b[i].
func Sub(dst, a, b []float32) { same("Sub", len(dst), a, b); active().sub(dst, a, b) }

// Mul sets dst[i] = a[i]·b[i].
func Mul(dst, a, b []float32) { same("Mul", len(dst), a, b); active().mul(dst, a, b) }

// Scale sets dst[i] = a[i]·s.
func Scale(dst, a []float32, s float32) { same("Scale", len(dst), a); active().scale(dst, a, s) }

// AddScalar sets dst[i] = a[i] + s.
func AddScalar(dst, a []float32, s float32) {
	same("AddScalar", len(dst), a)
	active().addScalar(dst, a, s)
}

// Affine64 sets dst[i] = float32(a·x[i] + c) with one float64 fused
// multiply-add (then the rounding to float32), the same bits on every level:
// group norm's affine map (x − μ)·a + β as a·x + (β − μ·a) with the offset
// in float64, so that large means lose nothing before the final rounding.
func Affine64(dst, x []float32, a, c float64) {
	same("Affine64", len(dst), x)
	k := active()
	body := k.f64Body(len(x), k.affine64 != nil)
	if body > 0 {
		k.affine64(dst[:body], x[:body], a, c)
	}
	affine64Ref(dst[body:], x[body:], a, c)
}

// AddScaled sets dst[i] = a[i] + s·b[i] (the STREAM triad), the product
// rounded before the sum (no FMA).
func AddScaled(dst, a, b []float32, s float32) {
	same("AddScaled", len(dst), a, b)
	active().addScaled(dst, a, b, s)
}

// Acc adds a into dst: dst[i] += a[i] (gradient accumulation).
func Acc(dst, a []float32) { same("Acc", len(dst), a); active().add(dst, dst, a) }

// Axpy adds s·a into dst: dst[i] += s·a[i], the product rounded first.
func Axpy(dst, a []float32, s float32) { same("Axpy", len(dst), a); active().addScaled(dst, dst, a, s) }

// Sum returns Σx[i], accumulated in float64 and rounded once to float32.
// The error is at most half an ulp of the result plus
// (n/L + 7)·2^-53·Σ|x[i]|, L the float64 partial sums (64 on AVX-512, 32 on
// AVX2, 1 for generic) combined by a tree: for n < 2^28 that term is below
// 2^-24·Σ|x[i]|. The order of the additions depends on the level, so levels
// may differ in the last bit; for one level and length it is deterministic.
func Sum(x []float32) float32 { return float32(active().sum(x)) }

// Sum64 is Sum without the final rounding to float32.
func Sum64(x []float32) float64 { return active().sum(x) }

// SumSqDev returns Σ(x[i] − m)² in float64 (the centred second moment of
// group norm's statistics), each difference and square in float64.
func SumSqDev(x []float32, m float64) float64 {
	k := active()
	body := k.f64Body(len(x), k.sumSqDev != nil)
	var s float64
	if body > 0 {
		s = k.sumSqDev(x[:body], m)
	}
	return s + sumSqDevRef(x[body:], m)
}

// SumDotDev returns Σdy[i] and Σdy[i]·(x[i] − m) in float64, each element,
// difference and product in float64 (the sums of group norm's backward
// pass), with Sum's error bound for each. The order of the additions depends
// on the level; for one level and length it is deterministic.
func SumDotDev(dy, x []float32, m float64) (sum, dot float64) {
	same("SumDotDev", len(dy), x)
	k := active()
	body := k.f64Body(len(dy), k.sumDotDev != nil)
	if body > 0 {
		sum, dot = k.sumDotDev(dy[:body], x[:body], m)
	}
	s, d := sumDotDevRef(dy[body:], x[body:], m)
	return sum + s, dot + d
}

// SumSquares returns Σx[i]² in float64 (each square is exact), with the
// error bound of Sum without the final rounding: for gradient-norm clipping.
func SumSquares(x []float32) float64 { return active().sumSquares(x) }

// Adam applies one fused Adam step (PyTorch's, no weight decay) to each
// element, with the float32 operations and order of tensor.Adam:
//
//	m = b1·m + (1-b1)·g;  v = b2·v + (1-b2)·g·g
//	params -= stepSize·m / (sqrt(v)/sqrtBC2 + eps)
//
// each product and sum rounded to float32 (no FMA), sqrt correctly rounded:
// the result is bit-identical to that loop compiled without fusion (Go on
// GOAMD64 v1/v2; see adamRef in ref.go).
func Adam(params, grads, m, v []float32, b1, b2, stepSize, sqrtBC2, eps float32) {
	same("Adam", len(params), grads, m, v)
	active().adam(params, grads, m, v, b1, 1-b1, b2, 1-b2, stepSize, sqrtBC2, eps)
}

// EMA moves shadow towards params: shadow[i] -= k·(shadow[i] - params[i]),
// bit-identical to that loop.
func EMA(shadow, params []float32, k float32) {
	same("EMA", len(shadow), params)
	active().ema(shadow, params, k)
}

// MaxMixRows and MaxMixInputs bound the shapes Mix and Mix64 take.
const (
	MaxMixRows   = 4
	MaxMixInputs = 8
)

// Mix sets out[r][i] = Σ_j coef[r·len(in)+j]·in[j][i] for every i: a small
// matrix (len(out) × len(in), row-major in coef) applied across rows, in
// float64 with fused multiply-adds in the order of j, rounded once to
// float32. 1 ≤ len(out) ≤ MaxMixRows, 1 ≤ len(in) ≤ MaxMixInputs, and every
// row has the same length. An out row may be the very slice of an in row
// (each element is written after all inputs of it were read), but must not
// partially overlap one. The result is bit-identical on every level.
func Mix(out [][]float32, coef []float64, in [][]float32) {
	k := active()
	body := mixBody("Mix", out, coef, in, k.f64Lanes)
	if body > 0 {
		outs, ins := mixPointers(out, in)
		mix32Kernel(k.level, len(out), body, &outs, &ins, len(in), &coef[0])
	}
	mixRef(out, coef, in, body)
}

// Mix64 is Mix for float64 rows (no rounding at the end).
func Mix64(out [][]float64, coef []float64, in [][]float64) {
	k := active()
	body := mixBody("Mix64", out, coef, in, k.f64Lanes)
	if body > 0 {
		outs, ins := mixPointers(out, in)
		mix64Kernel(k.level, len(out), body, &outs, &ins, len(in), &coef[0])
	}
	mixRef(out, coef, in, body)
}

// mixBody checks Mix's shapes and returns the number of leading elements
// the level's kernel handles (a multiple of lanes; the reference loop does
// the rest).
func mixBody[T float32 | float64](op string, out [][]T, coef []float64, in [][]T, lanes int) int {
	if len(out) < 1 || len(out) > MaxMixRows || len(in) < 1 || len(in) > MaxMixInputs {
		panic(fmt.Sprintf("vec.%s: %d output and %d input rows (want 1…%d and 1…%d)", op, len(out), len(in), MaxMixRows, MaxMixInputs))
	}
	if len(coef) != len(out)*len(in) {
		panic(fmt.Sprintf("vec.%s: %d coefficients for a %d×%d matrix", op, len(coef), len(out), len(in)))
	}
	n := len(in[0])
	for _, rows := range [2][][]T{out, in} {
		for _, r := range rows {
			if len(r) != n {
				panic(fmt.Sprintf("vec.%s: row lengths differ (%d and %d)", op, n, len(r)))
			}
		}
	}
	if lanes == 0 {
		return 0
	}
	return n - n%lanes
}

// mixPointers returns the first elements of the rows, the kernels'
// arguments (on the caller's stack: the kernels are called directly, see
// mix32Kernel).
func mixPointers[T float32 | float64](out, in [][]T) (outs [4]*T, ins [8]*T) {
	for r, o := range out {
		outs[r] = &o[0]
	}
	for j, x := range in {
		ins[j] = &x[0]
	}
	return outs, ins
}
