package tensor

import "fmt"

// FIR resampling with the separable kernel K = k·kᵀ/64·gain, k = [1, 3, 3, 1]
// (docs/ncsnpp.md#fir-resampling; StyleGAN2/score_sde upfirdn2d semantics): each plane
// of x (N, C, H, W) is upsampled by Up (Up−1 zeros after every sample),
// zero-padded by Pad before and Pad1 after on both axes, convolved with K and
// sampled every Down-th position from 0:
//
//	y[oy, ox] = Σ_{jy, jx} K[3−jy, 3−jx]·p[oy·Down + jy, ox·Down + jx],  OH = (H·Up + Pad + Pad1 − 4)/Down + 1.

// FIRTaps is the 1-D FIR kernel [1, 3, 3, 1]/8.
var FIRTaps = [4]float32{1.0 / 8, 3.0 / 8, 3.0 / 8, 1.0 / 8}

// FIRGeom is the geometry of one upfirdn2d.
type FIRGeom struct {
	Up, Down, Pad0, Pad1 int
	Gain                 float32
}

// The geometries NCSN++ uses (docs/ncsnpp.md#fir-resampling).
var (
	FIRUpsample   = FIRGeom{Up: 2, Down: 1, Pad0: 2, Pad1: 1, Gain: 4} // upsample_2d: 2n
	FIRDownsample = FIRGeom{Up: 1, Down: 2, Pad0: 1, Pad1: 1, Gain: 1} // downsample_2d: n/2
	FIRBlur       = FIRGeom{Up: 1, Down: 1, Pad0: 2, Pad1: 2, Gain: 1} // conv_downsample_2d's blur: n+1
)

// OutSize is the output length of an axis of length n.
func (g FIRGeom) OutSize(n int) int { return (n*g.Up+g.Pad0+g.Pad1-4)/g.Down + 1 }

// Adjoint is the geometry of the transpose of g on inputs of length n (its
// output has length n again): the gradient of UpFIRDn2d.
func (g FIRGeom) Adjoint(n int) FIRGeom {
	m := g.OutSize(n)
	return FIRGeom{Up: g.Down, Down: g.Up, Pad0: 3 - g.Pad0, Pad1: n*g.Up - m*g.Down + g.Pad0 - g.Up + 1, Gain: g.Gain}
}

// Valid reports whether g applies to an axis of length n.
func (g FIRGeom) Valid(n int) bool {
	return g.Up >= 1 && g.Down >= 1 && g.Pad0 >= 0 && g.Pad1 >= 0 && n*g.Up+g.Pad0+g.Pad1 >= 4
}

// UpFIRDn2d resamples x (N, C, H, W) with the FIR kernel and geometry g.
func UpFIRDn2d(out, x *Tensor, g FIRGeom) *Tensor {
	if len(x.shape) != 4 || !g.Valid(x.shape[2]) || !g.Valid(x.shape[3]) {
		panic(fmt.Sprintf("tensor: UpFIRDn2d: input %s with geometry %+v", fmtShape(x.shape), g))
	}
	shape := []int{x.shape[0], x.shape[1], g.OutSize(x.shape[2]), g.OutSize(x.shape[3])}
	out = dest(out, shape, x, "UpFIRDn2d")
	exec(Op{Kind: OpUpFIRDn2d, Up: g.Up, Down: g.Down, Pad: g.Pad0, Pad1: g.Pad1, Scalar: g.Gain}, out, x)
	return out
}
