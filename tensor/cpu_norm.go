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
		gamma, beta := in[1].data, in[2].data
		parallel.For(n*c, max(1, grain/s), func(lo, hi int) {
			for nc := lo; nc < hi; nc++ {
				ch := nc % c
				ng := nc/c*op.Groups + ch/cpg
				a, m, b := float64(rstd[ng]*gamma[ch]), mean64[ng], float64(beta[ch])
				src, dst := x[nc*s:(nc+1)*s], o[nc*s:(nc+1)*s]
				for i, v := range src {
					dst[i] = float32((float64(v)-m)*a + b)
				}
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
			for ng := lo; ng < hi; ng++ {
				m, r := mean[ng], rstd[ng]
				var mg, mgx float64
				for j := range cpg {
					ch := ng%op.Groups*cpg + j
					off := ng*size + j*s
					gm := gamma[ch]
					var sg, sgx float32
					for i, v := range x[off : off+s] {
						gv := dy[off+i] * gm
						sg += gv
						sgx += gv * (v - m)
					}
					mg += float64(sg)
					mgx += float64(sgx)
				}
				mg /= float64(size)
				mgx *= float64(r) / float64(size)
				fmg, fmgx := float32(mg), float32(mgx)
				for j := range cpg {
					ch := ng%op.Groups*cpg + j
					off := ng*size + j*s
					gm := gamma[ch]
					for i, v := range x[off : off+s] {
						o[off+i] = r * (dy[off+i]*gm - fmg - (v-m)*r*fmgx)
					}
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
					var sg, sb float32
					for i, v := range x[off : off+s] {
						sg += dy[off+i] * (v - mean[ng])
						sb += dy[off+i]
					}
					dg += float64(sg) * float64(rstd[ng])
					db += float64(sb)
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
			if op.Kind == OpSoftmaxGrad {
				dy := in[1].data[r*k : (r+1)*k]
				var dot float32
				for i, y := range row {
					dot += y * dy[i]
				}
				for i, y := range row {
					dst[i] = s * y * (dy[i] - dot)
				}
				continue
			}
			m := float32(math.Inf(-1))
			for _, v := range row {
				m = max(m, s*v)
			}
			var sum float32
			for i, v := range row {
				e := expf(s*v - m)
				dst[i] = e
				sum += e
			}
			inv := 1 / sum
			for i := range dst {
				dst[i] *= inv
			}
		}
	})
}
