package layers

import (
	"math"

	"holdgo/tensor"
)

// Inference-only image ops of the FID Inception network, built from the
// tensor op list (Concat, Slice, Max, MatMul, Conv2d) so that any device
// that implements the list runs them; they have no backward (the network is
// never trained here). The op list has no ReLU, pooling or resize of its own:
// another engineer owns tensor/, so these live at the layer level.

// maxOf returns the element-wise maximum of same-shape tensors: they are
// stacked along a new leading axis and reduced with Max.
func maxOf(ts ...*tensor.Tensor) *tensor.Tensor {
	shape := ts[0].Shape()
	n := ts[0].Len()
	rows := make([]*tensor.Tensor, len(ts))
	for i, t := range ts {
		rows[i] = t.Reshape(1, n)
	}
	return tensor.Max(nil, tensor.Concat(nil, 0, rows...), 0).Reshape(shape...)
}

// relu returns max(x, 0).
func relu(x *tensor.Tensor) *tensor.Tensor {
	return maxOf(x, tensor.Zeros(x.Shape()...))
}

// padAxis pads x (any rank) along axis with before and after slices of value v.
func padAxis(x *tensor.Tensor, axis, before, after int, v float32) *tensor.Tensor {
	parts := make([]*tensor.Tensor, 0, 3)
	side := func(k int) *tensor.Tensor {
		s := append([]int(nil), x.Shape()...)
		s[axis] = k
		return tensor.Full(v, s...)
	}
	if before > 0 {
		parts = append(parts, side(before))
	}
	parts = append(parts, x)
	if after > 0 {
		parts = append(parts, side(after))
	}
	if len(parts) == 1 {
		return x
	}
	return tensor.Concat(nil, axis, parts...)
}

// strided returns the count elements lo, lo+stride, … of x along axis.
func strided(x *tensor.Tensor, axis, lo, stride, count int) *tensor.Tensor {
	if stride == 1 {
		return tensor.Slice(nil, x, axis, lo, lo+count)
	}
	hi := min(lo+stride*count, x.Dim(axis))
	s := tensor.Slice(nil, x, axis, lo, hi)
	if short := stride*count - (hi - lo); short > 0 {
		s = padAxis(s, axis, 0, short, 0)
	}
	// Split the axis into (count, stride) and keep the first of each group.
	shape := x.Shape()
	split := append(append(append([]int(nil), shape[:axis]...), count, stride), shape[axis+1:]...)
	keep := tensor.Slice(nil, s.Reshape(split...), axis+1, 0, 1)
	out := append([]int(nil), shape...)
	out[axis] = count
	return keep.Reshape(out...)
}

// maxPool3 is max_pool2d with a 3×3 window, stride 1 (padding 1, padded with
// −∞ as PyTorch) or stride 2 (no padding) on x (N, C, H, W), done one axis at
// a time (the maximum over a box is the maximum of the row maxima).
func maxPool3(x *tensor.Tensor, stride int) *tensor.Tensor {
	for _, axis := range []int{3, 2} {
		if stride == 1 {
			x = padAxis(x, axis, 1, 1, float32(math.Inf(-1)))
		}
		n := (x.Dim(axis)-3)/stride + 1
		x = maxOf(strided(x, axis, 0, stride, n), strided(x, axis, 1, stride, n), strided(x, axis, 2, stride, n))
	}
	return x
}

// avgPoolMatrix is the n×n matrix of a 3-wide, stride-1, padding-1 average
// along one axis that does not count the padding: row i averages the 2 or 3
// inputs i−1…i+1 that exist.
func avgPoolMatrix(n int) *tensor.Tensor {
	m := tensor.Zeros(n, n)
	d := m.Data()
	for i := range n {
		lo, hi := max(i-1, 0), min(i+1, n-1)
		for j := lo; j <= hi; j++ {
			d[i*n+j] = 1 / float32(hi-lo+1)
		}
	}
	return m
}

// avgPool3 is avg_pool2d(x, 3, stride 1, padding 1, count_include_pad=False)
// on x (N, C, H, W). The window count factorises into a row and a column
// count, so the pool is A_H · X · A_Wᵀ per plane: two matrix products.
func avgPool3(x *tensor.Tensor) *tensor.Tensor {
	return separable(x, avgPoolMatrix(x.Dim(2)), avgPoolMatrix(x.Dim(3)))
}

// separable returns A_H · X · A_Wᵀ for every plane X of x (N, C, H, W), with
// a (H', H) and b (W', W): the result is (N, C, H', W').
func separable(x, a, b *tensor.Tensor) *tensor.Tensor {
	n, c, h, w := x.Dim(0), x.Dim(1), x.Dim(2), x.Dim(3)
	rows := tensor.MatMul(nil, x.Reshape(n*c, h, w), b, false, true) // (NC, H, W')
	out := tensor.MatMul(nil, a, rows, false, false)                 // (NC, H', W')
	return out.Reshape(n, c, a.Dim(0), b.Dim(0))
}

// bilinearMatrix is the (out, in) matrix of PyTorch's 1-D linear
// interpolation with align_corners=False: output i samples the input at
// (i + ½)·in/out − ½, clamped below at 0, between floor and floor+1 (the
// last index repeats at the border). The coefficients are computed as
// PyTorch's CPU kernel does (compute_source_index_and_lambda): a float32
// scale, the source index in float64 rounded to float32, float32 weights.
func bilinearMatrix(out, in int) *tensor.Tensor {
	m := tensor.Zeros(out, in)
	d := m.Data()
	scale := float32(in) / float32(out)
	for i := range out {
		src := float32(float64(scale)*(float64(i)+0.5) - 0.5)
		if src < 0 {
			src = 0
		}
		i0 := min(int(src), in-1)
		i1 := min(i0+1, in-1)
		l1 := src - float32(i0)
		d[i*in+i0] += 1 - l1
		d[i*in+i1] += l1
	}
	return m
}

// resizeBilinear is F.interpolate(x, size=(h, w), mode="bilinear",
// align_corners=False) on x (N, C, H, W): linear along each axis, hence two
// matrix products.
func resizeBilinear(x *tensor.Tensor, h, w int) *tensor.Tensor {
	return separable(x, bilinearMatrix(h, x.Dim(2)), bilinearMatrix(w, x.Dim(3)))
}
