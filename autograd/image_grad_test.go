package autograd

import (
	"holdgo/rng"
	"holdgo/tensor"
)

// Gradient checks of the image ops (conv.go, attention.go), registered into
// gradCases; channel concatenation of NCHW tensors is added to Concat's cases.
func init() {
	conv := func(x, w []int, bias bool, stride, pad int) gradCase {
		in := [][]int{x, w}
		if bias {
			in = append(in, []int{w[0]})
		}
		return gradCase{in, false, func(g *Tape, v []*Value) *Value {
			var b *Value
			if bias {
				b = v[2]
			}
			return g.Conv2d(v[0], v[1], b, stride, pad)
		}}
	}
	gradCases["Conv2d"] = []gradCase{
		conv([]int{2, 3, 5, 5}, []int{4, 3, 3, 3}, true, 1, 1),
		conv([]int{1, 2, 6, 6}, []int{3, 2, 3, 3}, true, 2, 1),
		conv([]int{1, 2, 7, 7}, []int{2, 2, 3, 3}, false, 2, 0),
		conv([]int{2, 5, 3, 4}, []int{3, 5, 1, 1}, true, 1, 0),
		// a per-sample bias (N, O): NCSN++'s conv bias + time embedding
		{[][]int{{2, 3, 5, 5}, {4, 3, 3, 3}, {2, 4}}, false, func(g *Tape, v []*Value) *Value { return g.Conv2d(v[0], v[1], v[2], 1, 1) }},
	}
	gn := func(shape []int, groups int) gradCase {
		c := shape[1]
		return gradCase{[][]int{shape, {c}, {c}}, false, func(g *Tape, v []*Value) *Value {
			return g.GroupNorm(v[0], v[1], v[2], groups, 1e-6)
		}}
	}
	gradCases["GroupNorm"] = []gradCase{gn([]int{2, 4, 3, 3}, 2), gn([]int{1, 6, 5}, 3), gn([]int{2, 8, 2, 2}, 1)}
	gnSiLU := func(shape []int, groups int) gradCase {
		c := shape[1]
		return gradCase{[][]int{shape, {c}, {c}}, false, func(g *Tape, v []*Value) *Value {
			return g.GroupNormSiLU(v[0], v[1], v[2], groups, 1e-6)
		}}
	}
	gradCases["GroupNormSiLU"] = []gradCase{gnSiLU([]int{2, 4, 3, 3}, 2), gnSiLU([]int{1, 6, 5}, 3), gnSiLU([]int{2, 8, 2, 2}, 1)}
	gradCases["Softmax"] = []gradCase{
		{[][]int{{3, 5}}, false, func(g *Tape, v []*Value) *Value { return g.Softmax(v[0]) }},
		{[][]int{{2, 1, 7}}, false, func(g *Tape, v []*Value) *Value { return g.Softmax(v[0]) }},
	}
	gradCases["Attention"] = []gradCase{
		{[][]int{{2, 3, 5}, {2, 3, 5}, {2, 3, 5}}, false, func(g *Tape, v []*Value) *Value { return g.Attention(v[0], v[1], v[2]) }},
		{[][]int{{1, 4, 9}}, false, func(g *Tape, v []*Value) *Value { return g.Attention(v[0], v[0], v[0]) }},
	}
	fir := func(shape []int, geom tensor.FIRGeom) gradCase {
		return gradCase{[][]int{shape}, false, func(g *Tape, v []*Value) *Value { return g.UpFIRDn2d(v[0], geom) }}
	}
	gradCases["UpFIRDn2d"] = []gradCase{
		fir([]int{1, 2, 4, 4}, tensor.FIRUpsample), fir([]int{2, 1, 6, 6}, tensor.FIRDownsample),
		fir([]int{1, 2, 5, 5}, tensor.FIRDownsample), fir([]int{1, 1, 4, 4}, tensor.FIRBlur),
		// conv_downsample_2d of the input pyramid: blur, then a stride-2 3×3 convolution.
		{[][]int{{1, 2, 6, 6}, {3, 2, 3, 3}, {3}}, false, func(g *Tape, v []*Value) *Value {
			return g.Conv2d(g.UpFIRDn2d(v[0], tensor.FIRBlur), v[1], v[2], 2, 0)
		}},
	}
	gradCases["Dropout"] = []gradCase{{[][]int{{4, 6}}, false, func(g *Tape, v []*Value) *Value {
		return g.Dropout(v[0], 0.3, &rng.Stream{Key: 5, ID: rng.DropoutStream(0)}) // the same mask every evaluation
	}}}
	gradCases["Concat"] = append(gradCases["Concat"], gradCase{[][]int{{2, 3, 2, 2}, {2, 1, 2, 2}}, false,
		func(g *Tape, v []*Value) *Value { return g.Concat(1, v[0], v[1]) }})
}
