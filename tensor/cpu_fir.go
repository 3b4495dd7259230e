package tensor

import "holdgo/internal/parallel"

// CPU kernel of UpFIRDn2d: separable, one plane per task; each axis uses a
// table of the (input index, tap) pairs that feed every output index.

type firTap struct {
	idx int
	w   float32
}

// firTable lists, for every output index of an axis of length n, the input
// samples and taps that contribute (at most 4).
func firTable(n, m, up, down, pad int) [][]firTap {
	t := make([][]firTap, m)
	for o := range m {
		for j := range 4 {
			u := o*down + j - pad
			if u < 0 || u%up != 0 || u/up >= n {
				continue
			}
			t[o] = append(t[o], firTap{u / up, FIRTaps[3-j]})
		}
	}
	return t
}

func cpuUpFIRDn2d(op Op, out, x *Tensor) {
	h, w := x.shape[2], x.shape[3]
	oh, ow := out.shape[2], out.shape[3]
	planes := x.shape[0] * x.shape[1]
	ty := firTable(h, oh, op.Up, op.Down, op.Pad)
	tx := firTable(w, ow, op.Up, op.Down, op.Pad)
	gain := op.Scalar
	parallel.For(planes, max(1, grain/max(oh*ow, 1)), func(lo, hi int) {
		tmp := make([]float32, h*ow)
		for p := lo; p < hi; p++ {
			src := x.data[p*h*w : (p+1)*h*w]
			for iy := range h { // horizontal pass: (H, W) → (H, OW)
				row, dst := src[iy*w:(iy+1)*w], tmp[iy*ow:(iy+1)*ow]
				for ox, taps := range tx {
					var s float32
					for _, t := range taps {
						s += t.w * row[t.idx]
					}
					dst[ox] = s
				}
			}
			dst := out.data[p*oh*ow : (p+1)*oh*ow]
			for oy, taps := range ty { // vertical pass: (H, OW) → (OH, OW)
				d := dst[oy*ow : (oy+1)*ow]
				clear(d)
				for _, t := range taps {
					wt := t.w * gain
					for i, v := range tmp[t.idx*ow : (t.idx+1)*ow] {
						d[i] += wt * v
					}
				}
			}
		}
	})
}
