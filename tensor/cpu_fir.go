package tensor

import (
	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

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
	gain := float64(op.Scalar)
	fast := op.Up == 1 && op.Down <= 2 || op.Up == 2 && op.Down == 1 && op.Pad <= 3 && ow <= 2*w+5
	parallel.For(planes, max(1, grain/max(oh*ow, 1)), func(lo, hi int) {
		var hp firRows
		outs, ins := make([][]float32, 1), make([][]float32, 0, 4)
		coef := make([]float64, 0, 4)
		for p := lo; p < hi; p++ {
			src := x.data[p*h*w : (p+1)*h*w]
			dst := out.data[p*oh*ow : (p+1)*oh*ow]
			if fast {
				hp.plane(dst, src, h, w, oh, ow, op.Up, op.Down, op.Pad, gain)
				continue
			}
			// Through the tap tables: horizontal pass (H, W) → (H, OW),
			// then a vec.Mix per output row.
			t, tw := hp.tablePass(src, h, w, ow, tx)
			for oy, taps := range ty {
				d := dst[oy*ow : (oy+1)*ow]
				if len(taps) == 0 {
					clear(d)
					continue
				}
				ins, coef = ins[:0], coef[:0]
				for _, tp := range taps {
					ins = append(ins, t[tp.idx*tw:tp.idx*tw+ow])
					coef = append(coef, float64(tp.w)*gain)
				}
				outs[0] = d
				vec.Mix(outs, coef, ins)
			}
		}
		hp.release()
	})
}

// plane is the SIMD path of one plane: the horizontal pass (pass) into t,
// with zero rows around its h rows, then the vertical pass the same way, as
// a few vec.Mix calls over the whole of t viewed at row offsets, the output
// rows copied out of the result (row stride down·tw; for up 2 one result
// per output row parity).
func (r *firRows) plane(dst, src []float32, h, w, oh, ow, up, down, pad int, gain float64) {
	k := firCoef(gain)
	outs := make([][]float32, 1)
	if up == 1 {
		// Output row oy reads rows oy·down + j − pad of the pass's output:
		// rows oy·down + j of t with pad zero rows on top.
		t, tw := r.pass(src, h, w, ow, up, down, pad, pad, max(pad+h, 3+oh*down))
		n := oh * down * tw
		o := r.buf(4, n)
		outs[0] = o
		vec.Mix(outs, k, [][]float32{t[:n], t[tw : tw+n], t[2*tw : 2*tw+n], t[3*tw : 3*tw+n]})
		for oy := range oh {
			copy(dst[oy*ow:(oy+1)*ow], o[oy*down*tw:])
		}
		return
	}
	const lead = 2 // up 2: zero rows on top, as pass's padL
	nq := (oh + 1) / 2
	t, tw := r.pass(src, h, w, ow, up, down, pad, lead, max(lead+h, lead+2+nq))
	for rr := range 2 {
		j0 := ((pad-rr)%2 + 2) % 2
		s := lead + (rr+j0-pad)/2
		n := (oh - rr + 1) / 2 * tw
		o := r.buf(4, n)
		outs[0] = o
		vec.Mix(outs, []float64{k[j0], k[j0+2]}, [][]float32{t[s*tw : s*tw+n], t[(s+1)*tw : (s+1)*tw+n]})
		for q := 0; 2*q+rr < oh; q++ {
			copy(dst[(2*q+rr)*ow:(2*q+rr+1)*ow], o[q*tw:])
		}
	}
}

// firCoef returns k_j = FIRTaps[3−j]·gain, firTable's tap of offset j.
func firCoef(gain float64) []float64 {
	k := make([]float64, 4)
	for j := range 4 {
		k[j] = float64(FIRTaps[3-j]) * gain
	}
	return k
}

// firRows is a task's work buffers for the horizontal pass.
type firRows struct {
	bufs [5]*[]float32
}

// buf returns work buffer i with room for n floats.
func (r *firRows) buf(i, n int) []float32 {
	if r.bufs[i] == nil || len(*r.bufs[i]) < n {
		if r.bufs[i] != nil {
			putScratch(r.bufs[i])
		}
		r.bufs[i] = getScratch(n)
	}
	return (*r.bufs[i])[:n]
}

func (r *firRows) release() {
	for _, b := range r.bufs {
		if b != nil {
			putScratch(b)
		}
	}
}

// tablePass is the horizontal pass through the tap table (any up, down
// and padding): scalar, one output at a time.
func (r *firRows) tablePass(src []float32, h, w, ow int, tx [][]firTap) ([]float32, int) {
	t := r.buf(0, h*ow)
	for iy := range h {
		row, dst := src[iy*w:(iy+1)*w], t[iy*ow:(iy+1)*ow]
		for ox, taps := range tx {
			var s float32
			for _, tp := range taps {
				s += tp.w * row[tp.idx]
			}
			dst[ox] = s
		}
	}
	return t, ow
}

// pass is the horizontal pass for up = 1 (down 1 or 2) and up = 2 (down
// 1, pad ≤ 3, OW ≤ 2W+5), over the whole plane at once as a few vec.Mix
// calls (SIMD) on shifted views of a zero-padded copy: rows are padded wide
// enough that no output of a row reads the next row, and the outputs
// computed past a row's end are never read. With p the copy (p[y·W + pad +
// x] = src[y][x]) and k_j = FIRTaps[3−j] (firTable's taps):
//
//	up 1, down 1: t[i] = Σ_j k_j p[i+j]
//	up 1, down 2: t[i] = k_0 e[i] + k_1 o[i] + k_2 e[i+1] + k_3 o[i+1],
//	              e and o the even and odd elements of p
//	up 2, down 1: output 2q+r (r = 0, 1) is Σ k_j src[q + (r+j−pad)/2] over
//	              the two j with r+j−pad even: two half-length passes,
//	              interleaved into t.
//
// It returns t, rows rows of tw floats: the h rows of the result from row
// lead on, zeros above and below.
func (r *firRows) pass(src []float32, h, w, ow, up, down, pad, lead, rows int) ([]float32, int) {
	k := firCoef(1)
	outs := make([][]float32, 1)
	var t []float32
	var tw int
	switch {
	case up == 1 && down == 1:
		tw = ow + 3 // ≥ pad + w
		pp := r.padded(src, h, w, tw, pad, 3)
		n := h * tw
		t = r.buf(3, rows*tw)
		outs[0] = t[lead*tw : lead*tw+n]
		vec.Mix(outs, k, [][]float32{pp[0:n], pp[1 : n+1], pp[2 : n+2], pp[3 : n+3]})
	case up == 1:
		wp := max(w+pad, 2*ow+2)
		wp += wp % 2
		pp := r.padded(src, h, w, wp, pad, 2)
		tw = wp / 2
		n := h * tw
		eo := r.buf(1, 2*n+2)
		e, o := eo[:n+1], eo[n+1:]
		for i := range n + 1 {
			e[i], o[i] = pp[2*i], pp[2*i+1]
		}
		t = r.buf(3, rows*tw)
		outs[0] = t[lead*tw : lead*tw+n]
		vec.Mix(outs, k, [][]float32{e[:n], o[:n], e[1 : n+1], o[1 : n+1]})
	default: // up 2, down 1
		const padL = 2 // ≥ −min (r+j−pad)/2 for pad ≤ 3
		wp := w + 8
		pp := r.padded(src, h, w, wp, padL, 4)
		n := h * wp
		ph := r.buf(1, 2*n)
		for rr := range 2 {
			j0 := ((pad-rr)%2 + 2) % 2
			s := padL + (rr+j0-pad)/2 // the view of tap j0; j0+2 reads one further
			outs[0] = ph[rr*n : (rr+1)*n]
			vec.Mix(outs, []float64{k[j0], k[j0+2]}, [][]float32{pp[s : s+n], pp[s+1 : s+1+n]})
		}
		tw = ow
		t = r.buf(3, rows*tw)
		for y := range h {
			row := t[(lead+y)*tw : (lead+y+1)*tw]
			e, o := ph[y*wp:], ph[n+y*wp:]
			for q := 0; 2*q < ow; q++ {
				row[2*q] = e[q]
				if 2*q+1 < ow {
					row[2*q+1] = o[q]
				}
			}
		}
	}
	clear(t[:lead*tw])
	clear(t[(lead+h)*tw:])
	return t, tw
}

// padded copies src (h rows of w) into buffer 0 as rows of wp floats,
// each row's values from column pad on, zeros elsewhere, plus extra zeros
// at the end.
func (r *firRows) padded(src []float32, h, w, wp, pad, extra int) []float32 {
	pp := r.buf(0, h*wp+extra)
	clear(pp)
	for y := range h {
		copy(pp[y*wp+pad:y*wp+pad+w], src[y*w:(y+1)*w])
	}
	return pp
}
