package tensor

import (
	"math"

	"holdgo/internal/parallel"
	"holdgo/internal/vec"
)

// CPU kernels of group normalisation and softmax: one (sample, group) or one
// row per task, float64 statistics.

// cpuGroupStats computes the mean and 1/√(var+eps) of every (sample, group)
// with two SIMD passes over the group (vec.Sum64, vec.SumSqDev: float64
// accumulation, the variance centred on the float64 mean).
func cpuGroupStats(x []float32, ng, size int, eps float64) (mean, rstd []float32, mean64 []float64) {
	mean, rstd, mean64 = make([]float32, ng), make([]float32, ng), make([]float64, ng)
	parallel.For(ng, max(1, grain/max(size, 1)), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			seg := x[i*size : (i+1)*size]
			m := vec.Sum64(seg) / float64(size)
			sq := vec.SumSqDev(seg, m)
			mean[i], rstd[i], mean64[i] = float32(m), float32(1/math.Sqrt(sq/float64(size)+eps)), m
		}
	})
	return mean, rstd, mean64
}

func cpuGroupNorm(op Op, out *Tensor, in []*Tensor) {
	x, o := in[0].data, out.data
	n, c := in[0].shape[0], in[0].shape[1]
	if n*c == 0 || len(x) == 0 {
		return
	}
	s := len(x) / (n * c)
	cpg := c / op.Groups
	size := cpg * s
	mean, rstd, mean64 := cpuGroupStats(x, n*op.Groups, size, float64(op.Scalar))
	switch op.Kind {
	case OpGroupNorm, OpGroupNormSiLU, OpGroupNormSiLUGrad:
		// One (sample, channel) row at a time: z = (x − μ)·rstd·γ + β into the
		// destination row, then for the fused ops SiLU (or dy·SiLU′) over it
		// while it is in cache.
		// The affine map is vec.Affine64, z = a·x + (β − μ·a) by one float64
		// fused multiply-add per element, rounded to float32 (μ·a and β − μ·a
		// in float64 lose nothing that matters before that rounding). Its
		// earlier form, a vec.Mix of the row and a row of ones, read two rows
		// and converted both: 166 against 86 ns for a row of 784 floats in L1
		// on AVX-512, 224 against 104 on AVX2.
		gamma, beta := in[1].data, in[2].data
		parallel.For(n*c, max(1, grain/s), func(lo, hi int) {
			for nc := lo; nc < hi; nc++ {
				ch := nc % c
				ng := nc/c*op.Groups + ch/cpg
				a := float64(rstd[ng] * gamma[ch])
				src, dst := x[nc*s:(nc+1)*s], o[nc*s:(nc+1)*s]
				vec.Affine64(dst, src, a, float64(beta[ch])-mean64[ng]*a)
				switch op.Kind {
				case OpGroupNormSiLU:
					vec.SiLU(dst, dst)
				case OpGroupNormSiLUGrad:
					vec.SiLUGrad(dst, dst, in[3].data[nc*s:(nc+1)*s])
				}
			}
		})
	case OpGroupNormGrad:
		gamma, dy := in[1].data, in[2].data
		parallel.For(n*op.Groups, max(1, grain/size), func(lo, hi int) {
			ones := make([]float32, s)
			for i := range ones {
				ones[i] = 1
			}
			var coef [3]float64
			outs, ins := make([][]float32, 1), make([][]float32, 3)
			for ng := lo; ng < hi; ng++ {
				m, r := mean[ng], rstd[ng]
				var mg, mgx float64
				for j := range cpg {
					ch := ng%op.Groups*cpg + j
					off := ng*size + j*s
					sg, sgx := vec.SumDotDev(dy[off:off+s], x[off:off+s], float64(m))
					mg += sg * float64(gamma[ch]) // a group of one element gets exactly 0 in mgx
					mgx += sgx * float64(gamma[ch])
				}
				mg /= float64(size)
				mgx *= float64(r) / float64(size)
				// dx = r·(γ·dy − mg − (x − μ)·r·mgx) as one vec.Mix of dy,
				// x and a row of ones (float64, rounded once).
				r64, m64 := float64(r), float64(m)
				for j := range cpg {
					ch := ng%op.Groups*cpg + j
					off := ng*size + j*s
					coef[0], coef[1], coef[2] = r64*float64(gamma[ch]), -r64*r64*mgx, r64*(m64*r64*mgx-mg)
					outs[0], ins[0], ins[1], ins[2] = o[off:off+s], dy[off:off+s], x[off:off+s], ones
					vec.Mix(outs, coef[:], ins)
				}
			}
		})
	case OpGroupNormParamGrad:
		dy := in[1].data
		parallel.For(c, 1, func(lo, hi int) {
			for ch := lo; ch < hi; ch++ {
				var dg, db float64
				for b := range n {
					ng := b*op.Groups + ch/cpg
					off := (b*c + ch) * s
					sb, sg := vec.SumDotDev(dy[off:off+s], x[off:off+s], float64(mean[ng]))
					dg += sg * float64(rstd[ng])
					db += sb
				}
				o[ch], o[c+ch] = float32(dg), float32(db)
			}
		})
	}
}

func cpuSoftmax(op Op, out *Tensor, in []*Tensor) {
	o, a := out.data, in[0].data
	k := out.shape[len(out.shape)-1]
	if k == 0 || len(o) == 0 {
		return
	}
	rows := len(o) / k
	s := op.Scalar
	parallel.For(rows, max(1, grain/k), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row, dst := a[r*k:(r+1)*k], o[r*k:(r+1)*k]
			// SIMD passes (vec) over the row: the scalar loops, expf
			// above all, were 5 % of an ncsnpp-small training step.
			if op.Kind == OpSoftmaxGrad { // s·y·(dy − Σ y·dy)
				dy := in[1].data[r*k : (r+1)*k]
				_, dot := vec.SumDotDev(dy, row, 0)
				vec.AddScalar(dst, dy, -float32(dot))
				vec.Mul(dst, dst, row)
				vec.Scale(dst, dst, s)
				continue
			}
			m := scaledMax(row, s)
			vec.Scale(dst, row, s)
			vec.AddScalar(dst, dst, -m)
			vec.Exp(dst, dst)
			vec.Scale(dst, dst, 1/vec.Sum(dst))
		}
	})
}

// scaledMax returns max_i s·row[i] for a non-empty row, as s·max(row) for s ≥ 0 and s·min(row) for
// s < 0 (rounding s·v is monotone in v, so this is the same float32), with four independent
// comparisons per step instead of the builtin max's NaN-propagating sequence: a NaN in the row is
// skipped here, and the softmax of that row comes out NaN all the same (through its exp and sum).
func scaledMax(row []float32, s float32) float32 {
	hi := [4]float32{row[0], row[0], row[0], row[0]}
	lo := hi
	i := 0
	for ; i+4 <= len(row); i += 4 {
		for j := range 4 {
			v := row[i+j]
			if v > hi[j] {
				hi[j] = v
			}
			if v < lo[j] {
				lo[j] = v
			}
		}
	}
	for ; i < len(row); i++ {
		hi[0], lo[0] = max(hi[0], row[i]), min(lo[0], row[i])
	}
	if s < 0 {
		return s * min(lo[0], lo[1], lo[2], lo[3])
	}
	return s * max(hi[0], hi[1], hi[2], hi[3])
}
